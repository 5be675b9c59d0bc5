import { json, noContent, route } from "@/lib/api/route";
import { deleteTemplate, getTemplate, updateTemplate } from "@/lib/metrics/templates";
import { idParams } from "@/lib/schemas/common";
import { updateTemplateBody } from "@/lib/schemas/metrics";

export const GET = route({
  params: idParams,
  handler: ({ params, userId }) => json(getTemplate(params.id, userId)),
});

export const PATCH = route({
  params: idParams,
  body: updateTemplateBody,
  handler: ({ params, body, userId }) => json(updateTemplate(params.id, body, userId)),
});

export const DELETE = route({
  params: idParams,
  handler: ({ params, userId }) => {
    deleteTemplate(params.id, userId);
    return noContent();
  },
});
