import { page, route } from "@/lib/api/route";
import { getGridPage } from "@/lib/results/grid";
import { idParams } from "@/lib/schemas/common";
import { gridQuery } from "@/lib/schemas/executions";

export const GET = route({
  params: idParams,
  query: gridQuery,
  handler: async ({ params, query }) => {
    const { items, total, totalKind, nextCursor } = await getGridPage(params.id, query);
    const res = page(items, total);
    res.headers.set("x-total-count-kind", totalKind);
    if (nextCursor) res.headers.set("x-next-cursor", nextCursor);
    res.headers.set("access-control-expose-headers", "X-Total-Count, X-Total-Count-Kind, X-Next-Cursor");
    return res;
  },
});
