import { json, route } from "@/lib/api/route";
import { startGeneration } from "@/lib/generation";
import { createGenerationBody } from "@/lib/schemas/generations";

export const dynamic = "force-dynamic";

/** Replay or simulate a dataset's conversations against a target: 202 at once, the work goes on in the server (`dry_run`: 200 with the calls it would make). */
export const POST = route({
  body: createGenerationBody,
  handler: async ({ body, userId }) => {
    const started = await startGeneration(body, userId);
    if (started.dryRun) return json(started.estimate);
    return json(started.generation, { status: 202, headers: { location: `/api/generations/${started.generation.id}` } });
  },
});
