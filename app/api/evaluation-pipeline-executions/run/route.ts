import { json, route } from "@/lib/api/route";
import { executionEventResponse } from "@/lib/api/execution-events";
import { estimateRun, startExecution } from "@/lib/runner";
import { runPostBody, runQuery } from "@/lib/schemas/executions";

export const dynamic = "force-dynamic";

/** Start a run; 202 with the execution at once, the work goes on in the server. `dry_run`: 200 with its estimate, nothing created. */
export const POST = route({
  body: runPostBody,
  handler: async ({ body: { dry_run, ...body }, userId }) => {
    if (dry_run) return json(await estimateRun(body));
    const execution = await startExecution(body, userId);
    return json(execution, { status: 202, headers: { location: `/api/evaluation-pipeline-executions/${execution.id}` } });
  },
});

/** Start the same run and follow it as Server-Sent Events. */
export const GET = route({
  query: runQuery,
  handler: async ({ query, userId, guard }) => {
    const execution = await startExecution(
      {
        ...query,
        pipeline_node_id: query.pipeline_node_id ?? null,
        entity_type: query.entity_type ?? null,
        entity_id: query.entity_id ?? null,
        model_name: query.model_name ?? null,
      },
      userId,
    );
    const res = await executionEventResponse(execution.id, { guard });
    res.headers.set("x-execution-id", String(execution.id));
    return res;
  },
});
