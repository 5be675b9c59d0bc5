import { json, route } from "@/lib/api/route";
import { createTemplate, listTemplates } from "@/lib/metrics/templates";
import { createTemplateBody, listTemplatesQuery } from "@/lib/schemas/metrics";

export const GET = route({
  query: listTemplatesQuery,
  handler: async ({ query, userId }) =>
    json(await listTemplates({ userId, evaluationLevel: query.evaluation_level, category: query.category })),
});

export const POST = route({
  body: createTemplateBody,
  handler: async ({ body, userId }) => json(await createTemplate(body, userId), { status: 201 }),
});
