import { json, page, route } from "@/lib/api/route";
import { createDataset, listDatasets } from "@/lib/datasets";
import { createDatasetBody, listDatasetsQuery } from "@/lib/schemas/datasets";

export const POST = route({
  body: createDatasetBody,
  // `user_id` in the body names the owner only in the one-person mode; with credentials it is the caller.
  handler: async ({ body, caller }) =>
    json(await createDataset({ name: body.name, description: body.description, userId: caller.via === "open" ? (body.user_id ?? caller.userId) : caller.userId }), {
      status: 201,
    }),
});

export const GET = route({
  query: listDatasetsQuery,
  handler: async ({ query }) => {
    const { items, total } = await listDatasets({ limit: query.limit, offset: query.offset, userId: query.user_id, name: query.name });
    return page(items, total);
  },
});
