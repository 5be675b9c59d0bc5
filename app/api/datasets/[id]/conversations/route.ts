import { page, route } from "@/lib/api/route";
import { listConversations } from "@/lib/datasets";
import { idParams, paginationQuery } from "@/lib/schemas/common";

export const GET = route({
  params: idParams,
  query: paginationQuery,
  handler: async ({ params, query }) => {
    const { items, total } = await listConversations(params.id, query);
    return page(items, total);
  },
});
