import { json, page, route } from "@/lib/api/route";
import { listGenerations, startGeneration } from "@/lib/generation";
import { createGenerationBody, listGenerationsQuery } from "@/lib/schemas/generations";

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

/** Generations, newest first: all, or those made from one source dataset (`X-Total-Count`). */
export const GET = route({
  query: listGenerationsQuery,
  handler: async ({ query }) => {
    const { items, total } = await listGenerations({ sourceDatasetId: query.source_dataset_id, limit: query.limit, offset: query.offset });
    return page(items, total);
  },
});
