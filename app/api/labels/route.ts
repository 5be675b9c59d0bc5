import { json, page, route } from "@/lib/api/route";
import { createLabel, listLabels } from "@/lib/labels";
import { createLabelBody, listLabelsQuery } from "@/lib/schemas/labels";

export const POST = route({
  body: createLabelBody,
  handler: ({ body, userId }) => json(createLabel(body, userId), { status: 201 }),
});

export const GET = route({
  query: listLabelsQuery,
  handler: ({ query }) => {
    const { items, total } = listLabels(query);
    return page(items, total);
  },
});
