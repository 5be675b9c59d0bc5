import { page, route } from "@/lib/api/route";
import { listConversations } from "@/lib/datasets";
import { idParams, paginationQuery } from "@/lib/schemas/common";

export const GET = route({
  params: idParams,
  query: paginationQuery,
  handler: ({ params, query }) => {
    const { items, total } = listConversations(params.id, query);
    return page(items, total);
  },
});
