/**
 * One execution as an SSE stream: a snapshot of the cells already finished (after Last-Event-ID, when
 * reconnecting), then live events, then `done`. The stream subscribes before it reads the snapshot and
 * holds live events back until the snapshot is out, so no event falls between them or repeats.
 */
import "server-only";
import { getExecutionRow, listResultRows } from "@/db/repositories/executions";
import { notFound } from "@/lib/api/errors";
import { sseResponse } from "@/lib/api/sse";
import { toExecution, toResult } from "@/lib/results/serialize";
import { progressOf, subscribe, type RunEvent } from "./events";
import { isRunning } from "./run";

const SNAPSHOT_PAGE = 1000;
/** How often an open stream checks that its execution still exists and is still running. */
const WATCH_MS = 2000;

function isFinal(status: string): status is "completed" | "failed" | "cancelled" {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** The SSE response for an execution; 404 AppError for an unknown id. */
export async function executionEventStream(executionId: number, lastEventId?: number, heartbeatMs?: number): Promise<Response> {
  if (!(await getExecutionRow(executionId))) throw notFound("Execution", executionId);
  return sseResponse(async (writer) => {
    let lastSent = lastEventId ?? 0;
    // Live events that arrive while the snapshot is read wait here, then go out after it: ids stay in
    // order and none is lost or repeated.
    let pending: RunEvent[] | undefined = [];
    const forward = (e: RunEvent) => {
      if (pending) return void pending.push(e);
      if ((e.event === "complete" || e.event === "error") && e.id <= lastSent) return;
      if (e.event === "complete" || e.event === "error") lastSent = e.id;
      writer.send({ event: e.event, id: "id" in e ? e.id : undefined, data: e.data });
      if (e.event === "done") writer.close();
    };
    const unsubscribe = subscribe(executionId, forward);
    // A final execution, or one no process is running any more, ends the stream now.
    const endIfOver = async () => {
      if (writer.closed()) return;
      const now = await getExecutionRow(executionId);
      // Deleted (with its dataset) while followed: nothing more will come.
      if (!now) return writer.close();
      if (isFinal(now.status) || !isRunning(executionId)) {
        const execution = toExecution(now);
        writer.send({ event: "done", data: { status: isFinal(execution.status) ? execution.status : "failed", execution } });
        writer.close();
      }
    };
    try {
      const row = await getExecutionRow(executionId);
      if (!row) {
        writer.close();
        return unsubscribe;
      }
      const total = row.totalEvaluations;
      let done = 0;
      for (let page = await listResultRows(executionId, { limit: SNAPSHOT_PAGE }); page.length; ) {
        for (const r of page) {
          done++;
          if (r.id <= lastSent) continue;
          const result = toResult(r);
          const base = { execution_id: executionId, pipeline_node_id: r.pipelineNodeId, entity_type: r.entityType, entity_id: r.entityId, progress: progressOf(done, total) };
          // Like the live events: only a failed cell is an `error`; a skipped one is a `complete` whose result says skipped.
          writer.send(
            r.status !== "failed"
              ? { event: "complete", id: r.id, data: { ...base, status: "complete", result } }
              : { event: "error", id: r.id, data: { ...base, status: "error", error: { message: r.error ?? "failed" }, result } },
          );
          lastSent = r.id;
        }
        if (writer.closed()) break;
        page = await listResultRows(executionId, { afterId: page[page.length - 1].id, limit: SNAPSHOT_PAGE });
      }
    } catch (error) {
      unsubscribe();
      throw error;
    }
    const waiting = pending;
    pending = undefined;
    for (const e of waiting) forward(e);
    await endIfOver();
    // A safety net behind the `done` event: a stream never outlives its execution.
    const watch = setInterval(() => void endIfOver(), WATCH_MS);
    return () => {
      clearInterval(watch);
      unsubscribe();
    };
  }, heartbeatMs);
}
