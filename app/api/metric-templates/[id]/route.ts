import { json, noContent, route } from "@/lib/api/route";
import { deleteTemplate, getTemplate, updateTemplate } from "@/lib/metrics/templates";
import { idParams } from "@/lib/schemas/common";
import { updateTemplateBody } from "@/lib/schemas/metrics";

export const GET = route({
  params: idParams,
  handler: async ({ params, userId }) => json(await getTemplate(params.id, userId)),
});

export const PATCH = route({
  params: idParams,
  body: updateTemplateBody,
  handler: async ({ params, body, userId }) => json(await updateTemplate(params.id, body, userId)),
});

export const DELETE = route({
  params: idParams,
  handler: async ({ params, userId }) => {
    await deleteTemplate(params.id, userId);
    return noContent();
  },
});
