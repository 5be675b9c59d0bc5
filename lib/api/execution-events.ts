/** An execution's event feed (lib/runner) answered as Server-Sent Events. */
import "server-only";
import { executionEventFeed } from "@/lib/runner";
import { sseResponse, type StreamGuard } from "./sse";

/** The SSE response for an execution; 404 AppError for an unknown id. The guard ends it when the caller's credential no longer holds. */
export async function executionEventResponse(executionId: number, opts: { lastEventId?: number; heartbeatMs?: number; guard?: StreamGuard } = {}): Promise<Response> {
  return sseResponse(await executionEventFeed(executionId, opts.lastEventId), opts.heartbeatMs, opts.guard);
}
