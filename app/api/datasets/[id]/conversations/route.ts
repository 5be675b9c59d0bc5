import { page, route } from "@/lib/api/route";
import { listConversations } from "@/lib/datasets";
import { idParams } from "@/lib/schemas/common";
import { listConversationsQuery } from "@/lib/schemas/datasets";

export const GET = route({
  params: idParams,
  query: listConversationsQuery,
  handler: async ({ params, query }) => {
    const { items, total } = await listConversations(params.id, query);
    return page(items, total);
  },
});
