import { json, route } from "@/lib/api/route";
import { getExecution } from "@/lib/results/execution-history";
import { cancelExecution } from "@/lib/runner";
import { idParams } from "@/lib/schemas/common";

export const GET = route({
  params: idParams,
  handler: async ({ params }) => json(await getExecution(params.id)),
});

/** Cancel: in-flight judge calls are aborted, finished results kept; 409 when already final. */
export const DELETE = route({
  params: idParams,
  handler: async ({ params }) => json(await cancelExecution(params.id)),
});
