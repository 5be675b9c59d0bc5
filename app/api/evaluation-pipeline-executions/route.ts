import { page, route } from "@/lib/api/route";
import { listExecutions } from "@/lib/results/execution-history";
import { listExecutionsQuery } from "@/lib/schemas/executions";

export const GET = route({
  query: listExecutionsQuery,
  handler: async ({ query }) => {
    const { items, total } = await listExecutions({
      datasetId: query.dataset_id,
      status: query.status,
      pipelineNodeId: query.pipeline_node_id,
      limit: query.limit,
      offset: query.offset,
      sort: query.sort,
    });
    return page(items, total);
  },
});
