import { page, route } from "@/lib/api/route";
import { listConversations } from "@/lib/datasets";
import { idParams } from "@/lib/schemas/common";
import { listConversationsQuery } from "@/lib/schemas/datasets";

export const GET = route({
  params: idParams,
  query: listConversationsQuery,
  handler: async ({ params, query }) => {
    const { items, total, nextCursor } = await listConversations(params.id, query);
    const res = page(items, total);
    if (nextCursor) {
      res.headers.set("x-next-cursor", nextCursor);
      res.headers.set("access-control-expose-headers", "X-Total-Count, X-Next-Cursor");
    }
    return res;
  },
});
