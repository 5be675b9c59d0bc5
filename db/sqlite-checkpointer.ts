/**
 * WAL checkpoints off the event loop. better-sqlite3 runs every statement on the calling thread, and
 * SQLite checkpoints from the commit that passes `wal_autocheckpoint` pages: that commit copies the WAL's
 * pages into the database file and waits for the disk to flush them. An OTLP export of 512 spans dirties
 * ~5 MB of pages (its rows and two random-keyed indexes), so nearly every export's commit did a checkpoint:
 * 84 ms per export where the same inserts take 19 ms without it, and with the disk's speed, not the
 * CPU's, setting the difference (docs/performance.md, trace ingest).
 *
 * Here a worker thread with a connection of its own runs a PASSIVE checkpoint every CHECKPOINT_EVERY_MS
 * (it never waits for or blocks the writer), and the server's connection checkpoints itself only as a
 * backstop, when the WAL has grown to AUTOCHECKPOINT_BACKSTOP_PAGES without the thread catching up.
 */
import { Worker } from "node:worker_threads";

export const CHECKPOINT_EVERY_MS = 100;
/**
 * The writers' own `wal_autocheckpoint` (SQLite's default is 1,000 pages): ~400 MB of WAL at 4 KB pages. At
 * 10,000 (~40 MB) a trace store of 2M spans, whose checkpoints copy into a large file, let the WAL pass it
 * every ~100 exports, and that export's commit checkpointed itself: the store's p99 38 -> 61-73 ms from
 * empty to 2M spans, flat (38 ms) at 100,000 (bench/trace-store.bench.ts, docs/performance.md).
 */
export const AUTOCHECKPOINT_BACKSTOP_PAGES = 100_000;

// Plain JavaScript run as the worker's source: no bundling needed, and `better-sqlite3` resolves from the
// project root (the working directory of `next start`, the tests and the scripts), where the server loads it.
const source = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require("better-sqlite3");
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma("busy_timeout = 5000");
let timer;
const tick = () => {
  try {
    const [row] = db.pragma("wal_checkpoint(PASSIVE)");
    parentPort.postMessage({ checkpointed: row.checkpointed });
  } catch (error) {
    parentPort.postMessage({ error: String((error && error.message) || error) });
  }
  timer = setTimeout(tick, workerData.everyMs);
};
timer = setTimeout(tick, workerData.everyMs);
parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
`;

export type Checkpointer = {
  /** Checkpoint passes the thread has run. */
  readonly passes: number;
  /** The last error a checkpoint gave, if any (the writer's backstop still bounds the WAL). */
  readonly lastError: string | null;
  stop(): void;
};

/** Start checkpointing `file` from a worker thread; it does not keep the process alive. */
export function startCheckpointer(file: string, onError: (message: string) => void): Checkpointer {
  const worker = new Worker(source, { eval: true, workerData: { file, everyMs: CHECKPOINT_EVERY_MS } });
  worker.unref();
  const state = { passes: 0, lastError: null as string | null, stopped: false };
  worker.on("message", (message: { checkpointed?: number; error?: string }) => {
    if (message.error) {
      if (state.lastError !== message.error) onError(message.error);
      state.lastError = message.error;
    } else {
      state.passes++;
      state.lastError = null;
    }
  });
  worker.on("error", (error) => {
    state.lastError = error.message;
    onError(error.message);
  });
  return {
    get passes() {
      return state.passes;
    },
    get lastError() {
      return state.lastError;
    },
    stop() {
      if (state.stopped) return;
      state.stopped = true;
      worker.postMessage("stop");
    },
  };
}
