import { AppError } from "@/lib/errors";
import { route } from "@/lib/api/route";
import { executionEventResponse } from "@/lib/api/execution-events";
import { idParams, intText, MAX_ID } from "@/lib/schemas/common";
import { z } from "zod";

export const dynamic = "force-dynamic";

const lastEventId = intText({ min: 0, max: MAX_ID });

/** Follow an execution: snapshot of finished cells, then live events; reconnect with Last-Event-ID. */
export const GET = route({
  params: idParams,
  query: z.object({ last_event_id: lastEventId.optional() }),
  handler: async ({ params, query, req, guard }) => {
    const header = req.headers.get("last-event-id");
    let resumeAfter = query.last_event_id;
    if (header) {
      const parsed = lastEventId.safeParse(header);
      if (!parsed.success) throw new AppError("bad_request", "Last-Event-ID must be an event id from this stream", [{ path: "Last-Event-ID", message: "must be a non-negative integer" }]);
      resumeAfter = parsed.data;
    }
    return await executionEventResponse(params.id, { lastEventId: resumeAfter, guard });
  },
});
