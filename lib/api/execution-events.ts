/** An execution's event feed (lib/runner) answered as Server-Sent Events. */
import "server-only";
import { executionEventFeed } from "@/lib/runner";
import { sseResponse } from "./sse";

/** The SSE response for an execution; 404 AppError for an unknown id. */
export async function executionEventResponse(executionId: number, lastEventId?: number, heartbeatMs?: number): Promise<Response> {
  return sseResponse(await executionEventFeed(executionId, lastEventId), heartbeatMs);
}
