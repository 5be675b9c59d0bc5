import { json, page, route } from "@/lib/api/route";
import { createLabel, listLabels } from "@/lib/labels";
import { createLabelBody, listLabelsQuery } from "@/lib/schemas/labels";

export const POST = route({
  body: createLabelBody,
  handler: async ({ body, userId }) => json(await createLabel(body, userId), { status: 201 }),
});

export const GET = route({
  query: listLabelsQuery,
  handler: async ({ query }) => {
    const { items, total } = await listLabels(query);
    return page(items, total);
  },
});
