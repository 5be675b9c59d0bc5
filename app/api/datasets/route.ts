import { json, page, route } from "@/lib/api/route";
import { createDataset, listDatasets } from "@/lib/datasets";
import { createDatasetBody, listDatasetsQuery } from "@/lib/schemas/datasets";

export const POST = route({
  body: createDatasetBody,
  handler: async ({ body, userId }) =>
    json(await createDataset({ name: body.name, description: body.description, userId: body.user_id ?? userId }), {
      status: 201,
    }),
});

export const GET = route({
  query: listDatasetsQuery,
  handler: async ({ query }) => {
    const { items, total } = await listDatasets({ limit: query.limit, offset: query.offset, userId: query.user_id });
    return page(items, total);
  },
});
