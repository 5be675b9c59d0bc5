import { json, route } from "@/lib/api/route";
import { listAlignments, startAlignment } from "@/lib/align";
import { createAlignmentBody, listAlignmentsQuery } from "@/lib/schemas/alignments";

export const dynamic = "force-dynamic";

/** Align a metric's judge to the truth: 202 at once, the work goes on in the server (`dry_run`: 200 with the calls it would make). */
export const POST = route({
  body: createAlignmentBody,
  handler: async ({ body, userId }) => {
    const started = await startAlignment(body, userId);
    if (started.dryRun) return json(started.estimate);
    return json(started.alignment, { status: 202, headers: { location: `/api/alignments/${started.alignment.id}` } });
  },
});

/** A metric's alignments, newest first. */
export const GET = route({ query: listAlignmentsQuery, handler: async ({ query }) => json(await listAlignments(query.pipeline_node_id)) });
