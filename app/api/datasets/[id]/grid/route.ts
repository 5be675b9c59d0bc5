import { page, route } from "@/lib/api/route";
import { getGridPage } from "@/lib/results/grid";
import { idParams } from "@/lib/schemas/common";
import { gridQuery } from "@/lib/schemas/executions";

export const GET = route({
  params: idParams,
  query: gridQuery,
  handler: async ({ params, query }) => {
    const { items, total } = await getGridPage(params.id, query);
    return page(items, total);
  },
});
