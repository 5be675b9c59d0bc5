import { json, route } from "@/lib/api/route";
import { evaluateWithSource } from "@/lib/generation/evaluate";
import { idParams } from "@/lib/schemas/common";
import { evaluateGenerationBody } from "@/lib/schemas/generations";

export const dynamic = "force-dynamic";

/** Run the chosen source metrics on the source and on the generated dataset: 202 with both executions and the comparison's page. */
export const POST = route({
  params: idParams,
  body: evaluateGenerationBody,
  handler: async ({ params, body, userId }) => json(await evaluateWithSource(params.id, body.pipeline_node_ids, userId, { executionMode: body.execution_mode, batchSize: body.batch_size }), { status: 202 }),
});
