/**
 * One execution as a feed of events (the SSE route streams it), the same for both engines: the cells
 * already finished (after Last-Event-ID, when reconnecting), then each cell as it is saved, then `done`.
 * Cells are read from the table in id order, so none falls between the two or repeats.
 */
import "server-only";
import { getExecutionRow } from "@/db/repositories/executions";
import { listResultRows } from "@/db/repositories/evaluation-results";
import type { EvaluationResultRow } from "@/db/schema";
import { notFound } from "@/lib/errors";
import { toExecution, toResult } from "@/lib/results/serialize";
import { runEngine } from "./engine";
import { progressOf, subscribe, type RunEvent } from "./events";
import { isFinalStatus } from "@/lib/execution-status";

const SNAPSHOT_PAGE = 1000;
/** How often an open stream checks that its execution still exists and is still running. */
const WATCH_MS = 2000;
/** A stream reads new results this often when no event or notification arrives. */
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
  return runFeed(executionId, lastEventId);
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
 * An execution's feed, whichever engine works it: the stream follows the table — the results after the
 * last one sent, in id order (one execution's results commit in id order), read when a cell is saved
 * (this process's events; on PostgreSQL, other processes' NOTIFY) and every FOLLOW_MS as a fallback —
 * and ends with `done` once the execution is final (or nobody works it any more). `processing` events
 * come from this process's own cells only: they are not stored.
 */
function runFeed(executionId: number, lastEventId?: number): EventFeed {
  const engine = runEngine();
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
        if (!(await engine.isLive(executionId))) {
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
      } else if (e.event === "processing") {
        if (ready) writer.send({ event: e.event, data: e.data });
      } else void follow(); // a cell saved here
    });
    let unsubscribeOthers: (() => void) | undefined;
    try {
      unsubscribeOthers = await engine.followOthers(executionId, () => void follow());
    } catch {
      // Without notifications the timer still follows the run.
    }
    await follow();
    ready = true;
    const timer = setInterval(() => void follow(), FOLLOW_MS);
    return () => {
      clearInterval(timer);
      unsubscribeLocal();
      unsubscribeOthers?.();
    };
  };
}
