import { json, route } from "@/lib/api/route";
import { createTemplate, listTemplates } from "@/lib/metrics/templates";
import { createTemplateBody, listTemplatesQuery } from "@/lib/schemas/metrics";

export const GET = route({
  query: listTemplatesQuery,
  handler: ({ query, userId }) =>
    json(listTemplates({ userId, evaluationLevel: query.evaluation_level, category: query.category })),
});

export const POST = route({
  body: createTemplateBody,
  handler: ({ body, userId }) => json(createTemplate(body, userId), { status: 201 }),
});
