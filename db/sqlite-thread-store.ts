/**
 * A transaction run on a worker thread with a SQLite connection of its own (the input pool's threads,
 * lib/input-worker.ts), for writes whose cost grows with what a caller sent: an OTLP export's spans.
 * The body is a transaction body of the repositories (hand-written SQL, `raw` and `rawRun` steps, e.g.
 * `storeSpansSteps`), run synchronously in BEGIN IMMEDIATE … COMMIT as db/dialect/sqlite.ts runs it on the
 * server's connection. While it is open the thread holds the write gate (db/sqlite-write-gate.ts), so the
 * server's own writes wait for it off its event loop; this connection waits for theirs in SQLite's busy
 * handler, on this thread. Reads of the server go on meanwhile (WAL).
 *
 * The server opens and migrates the database before it hands a thread its path. No `server-only` and no
 * driver import the bundler would follow: better-sqlite3 is loaded from the project root at run time, as
 * the server loads it (next.config.ts keeps it external) and db/sqlite-checkpointer.ts's thread does.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { threadId } from "node:worker_threads";
import type BetterSqlite3 from "better-sqlite3";
import type { Step } from "./dialect/types";
import { AUTOCHECKPOINT_BACKSTOP_PAGES } from "./sqlite-checkpointer";
import { holdWriteGate, releaseWriteGate, type WriteGate } from "./sqlite-write-gate";

/** Where a thread writes: the database file (absolute) and the server's write gate. */
export type ThreadStore = { file: string; gate: WriteGate };

/** How long this connection waits for the server's (or another thread's) write lock before it fails. */
const BUSY_TIMEOUT_MS = 30_000;

type Open = { file: string; db: BetterSqlite3.Database; statements: Map<string, BetterSqlite3.Statement> };
let open: Open | undefined;

function connection(file: string): Open {
  if (open?.file === file) return open;
  open?.db.close();
  const load = createRequire(path.join(process.cwd(), "package.json"));
  const Database = load("better-sqlite3") as typeof BetterSqlite3;
  const db = new Database(file, { fileMustExist: true });
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma("foreign_keys = ON");
  db.pragma("synchronous = NORMAL");
  // Checkpoints run on their own thread (db/sqlite-checkpointer.ts): this connection only as the server's does, past the backstop.
  db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_BACKSTOP_PAGES}`);
  db.pragma("cache_size = -32768");
  open = { file, db, statements: new Map() };
  return open;
}

function prepared(o: Open, text: string): BetterSqlite3.Statement {
  let s = o.statements.get(text);
  if (!s) o.statements.set(text, (s = o.db.prepare(text)));
  return s;
}

/** Run `body` in one transaction on this thread's connection to `store.file`, holding the write gate. */
export function threadTransaction<R>(store: ThreadStore, body: () => Generator<Step, R, unknown>): R {
  // The server's thread is 0, which the gate reads as free: its writes go through db/dialect/sqlite.ts.
  if (threadId === 0) throw new Error("threadTransaction runs on a worker thread");
  const o = connection(store.file);
  holdWriteGate(store.gate, threadId);
  try {
    o.db.exec("BEGIN IMMEDIATE");
    try {
      const steps = body();
      let next = steps.next();
      while (!next.done) {
        const step = next.value;
        let value: unknown;
        if (step.kind === "raw") {
          const s = prepared(o, step.text);
          value = s.reader ? s.all(...step.params) : (s.run(...step.params), []);
        } else if (step.kind === "rawRun") value = prepared(o, step.text).run(...step.params).changes;
        else throw new Error(`a thread's transaction runs hand-written SQL only (raw, rawRun steps), not ${step.kind}`);
        next = steps.next(value);
      }
      o.db.exec("COMMIT");
      return next.value;
    } catch (error) {
      if (o.db.inTransaction) o.db.exec("ROLLBACK");
      throw error;
    }
  } finally {
    releaseWriteGate(store.gate, threadId);
  }
}

/** Close this thread's connection (the thread is stopping). */
export function closeThreadStore(): void {
  open?.db.close();
  open = undefined;
}
