/**
 * One execution as a feed of events (the SSE route streams it): a snapshot of the cells already finished (after Last-Event-ID, when
 * reconnecting), then live events, then `done`. The stream subscribes before it reads the snapshot and
 * holds live events back until the snapshot is out, so no event falls between them or repeats.
 */
import "server-only";
import { getExecutionRow } from "@/db/repositories/executions";
import { listResultRows } from "@/db/repositories/evaluation-results";
import type { EvaluationResultRow } from "@/db/schema";
import { notFound } from "@/lib/errors";
import { toExecution, toResult } from "@/lib/results/serialize";
import { subscribe as subscribeCluster } from "@/lib/cluster/notify";
import { executionIsLive, progressChannel, runsAreQueued } from "./cluster-run";
import { progressOf, subscribe, type RunEvent } from "./events";
import { isRunning } from "./run";
import { isFinalStatus } from "@/lib/execution-status";

const SNAPSHOT_PAGE = 1000;
/** How often an open stream checks that its execution still exists and is still running. */
const WATCH_MS = 2000;
/** A queued run's stream reads new results this often when no notification arrives. */
const FOLLOW_MS = 500;

/** One message of an execution's event feed: an SSE frame's event name, id and data. */
export type FeedMessage = { event?: string; id?: number; data: unknown };
/** Where a feed writes its messages (the web layer turns it into an SSE stream). */
export type FeedSink = { send: (m: FeedMessage) => void; close: () => void; closed: () => boolean };
/** An execution's events, started with a sink; returns (or resolves to) the cleanup for when the reader goes away. */
export type EventFeed = (sink: FeedSink) => (() => void) | Promise<() => void>;

/** The event feed of an execution; 404 AppError for an unknown id. */
export async function executionEventFeed(executionId: number, lastEventId?: number): Promise<EventFeed> {
  if (!(await getExecutionRow(executionId))) throw notFound("Execution", executionId);
  if (runsAreQueued()) return queuedRunFeed(executionId, lastEventId);
  return async (writer) => {
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
      if (isFinalStatus(now.status) || !isRunning(executionId)) {
        const execution = toExecution(now);
        writer.send({ event: "done", data: { status: isFinalStatus(execution.status) ? execution.status : "failed", execution } });
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
          writer.send(cellEvent(r, executionId, progressOf(done, total)));
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
  };
}

function cellEvent(r: EvaluationResultRow, executionId: number, progress: number): { event: string; id: number; data: unknown } {
  const result = toResult(r);
  const base = { execution_id: executionId, pipeline_node_id: r.pipelineNodeId, entity_type: r.entityType, entity_id: r.entityId, progress };
  // Like the live events: only a failed cell is an `error`; a skipped one is a `complete` whose result says skipped.
  return r.status !== "failed"
    ? { event: "complete", id: r.id, data: { ...base, status: "complete", result } }
    : { event: "error", id: r.id, data: { ...base, status: "error", error: { message: r.error ?? "failed" }, result } };
}

/**
 * A queued run's feed (PostgreSQL): any process may save its cells, so the stream follows the table —
 * the results after the last one sent, in id order (one execution's results commit in id order), read
 * when a process announces progress (NOTIFY) and every FOLLOW_MS as a fallback — and ends with `done`
 * once the execution is final (or no process has work of it left). `processing` events come from this
 * process's own workers only: they are not stored.
 */
function queuedRunFeed(executionId: number, lastEventId?: number): EventFeed {
  return async (writer) => {
    let lastSent = lastEventId ?? 0;
    let readUpTo = 0;
    let counted = 0;
    let ready = false;
    let localDone: Extract<RunEvent, { event: "done" }> | undefined;
    let lastLiveCheck = 0;
    let reading: Promise<void> | null = null;
    let again = false;

    const readResults = async (total: number) => {
      for (let page = await listResultRows(executionId, { afterId: readUpTo, limit: SNAPSHOT_PAGE }); page.length; ) {
        for (const r of page) {
          counted++;
          readUpTo = r.id;
          if (r.id <= lastSent) continue;
          writer.send(cellEvent(r, executionId, progressOf(counted, total)));
          lastSent = r.id;
        }
        if (writer.closed()) return;
        page = await listResultRows(executionId, { afterId: readUpTo, limit: SNAPSHOT_PAGE });
      }
    };
    const finish = (row: Awaited<ReturnType<typeof getExecutionRow>>) => {
      if (row) {
        const execution = toExecution(row);
        writer.send({ event: "done", data: { status: isFinalStatus(execution.status) ? execution.status : "failed", execution } });
      } else if (localDone) writer.send({ event: "done", data: localDone.data });
      writer.close();
    };
    const step = async () => {
      const row = await getExecutionRow(executionId);
      if (!row) return finish(undefined); // deleted with its dataset: nothing more will come
      await readResults(row.totalEvaluations);
      if (writer.closed()) return;
      if (isFinalStatus(row.status)) return finish(row);
      if (localDone) {
        // Announced final here while we read: read what came before it, then end.
        const now = await getExecutionRow(executionId);
        if (now) await readResults(now.totalEvaluations);
        return finish(now);
      }
      if (Date.now() - lastLiveCheck >= WATCH_MS) {
        lastLiveCheck = Date.now();
        // No process has work of it left and it is not final: it was orphaned; say so and end.
        if (!(await executionIsLive(executionId))) {
          const now = await getExecutionRow(executionId);
          if (now) await readResults(now.totalEvaluations);
          return finish(now);
        }
      }
    };
    // One read at a time; a wake-up during a read makes one more after it.
    const follow = (): Promise<void> => {
      if (writer.closed()) return Promise.resolve();
      if (reading) {
        again = true;
        return reading;
      }
      reading = (async () => {
        try {
          do {
            again = false;
            await step();
          } while (again && !writer.closed());
        } catch {
          // A failed read (the database restarting): the timer tries again.
        } finally {
          reading = null;
        }
      })();
      return reading;
    };

    const unsubscribeLocal = subscribe(executionId, (e) => {
      if (e.event === "done") {
        localDone = e;
        void follow();
      } else if (e.event === "processing" && ready) writer.send({ event: e.event, data: e.data });
    });
    let unsubscribeCluster: (() => Promise<void>) | undefined;
    try {
      unsubscribeCluster = await subscribeCluster(progressChannel, (payload) => {
        if (payload === executionId) void follow();
      });
    } catch {
      // Without notifications the timer still follows the run.
    }
    await follow();
    ready = true;
    const timer = setInterval(() => void follow(), FOLLOW_MS);
    return () => {
      clearInterval(timer);
      unsubscribeLocal();
      void unsubscribeCluster?.();
    };
  };
}
