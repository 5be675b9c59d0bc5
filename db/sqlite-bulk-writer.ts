/**
 * Large SQLite transactions off the event loop. better-sqlite3 runs every statement on the calling
 * thread, so an import's one transaction of 400,000 messages held every request for seconds (issue 48,
 * finding 11). Here a worker thread with a connection of its own runs such a transaction's statements:
 * the server's loop builds the rows a slice at a time and goes on answering while the thread inserts.
 *
 * The thread's BEGIN IMMEDIATE takes the database's write lock; while it holds it, the server's
 * transactions and hand-written writes wait for it asynchronously (db/dialect/sqlite.ts awaits
 * `writesPaused()`), not in SQLite's busy wait on the loop. Reads go on: in WAL mode they see what was
 * committed before.
 */
import path from "node:path";
import { Worker } from "node:worker_threads";

// Plain JavaScript run as the worker's source (as db/sqlite-checkpointer.ts): no bundling needed, and
// `better-sqlite3` resolves from the project root, where the server loads it.
const source = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require("better-sqlite3");
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma("foreign_keys = ON");
db.pragma("busy_timeout = 30000");
db.pragma("synchronous = NORMAL");
const statements = new Map();
const prepared = (text) => {
  let s = statements.get(text);
  if (!s) statements.set(text, (s = db.prepare(text)));
  return s;
};
parentPort.on("message", (m) => {
  try {
    let value = null;
    if (m.op === "begin") db.exec("BEGIN IMMEDIATE");
    else if (m.op === "commit") db.exec("COMMIT");
    else if (m.op === "rollback") { if (db.inTransaction) db.exec("ROLLBACK"); }
    else if (m.op === "raw") { const s = prepared(m.text); value = s.reader ? s.all(...m.params) : (s.run(...m.params), []); }
    else if (m.op === "run") value = prepared(m.text).run(...m.params).changes;
    else if (m.op === "insert") {
      const s = prepared("insert into " + m.table + " (" + m.columns.join(", ") + ") values (" + m.columns.map(() => "?").join(", ") + ")");
      value = m.rows.map((row) => Number(s.run(...row).lastInsertRowid));
    } else if (m.op === "close") { db.close(); parentPort.close(); return; }
    parentPort.postMessage({ id: m.id, ok: true, value });
  } catch (error) {
    parentPort.postMessage({ id: m.id, ok: false, message: String((error && error.message) || error) });
  }
});
parentPort.postMessage({ ready: true });
`;

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string };

export type BulkWriter = {
  /** Send one operation; resolves with its value (rows, changes, inserted ids). */
  send(op: Record<string, unknown> & { op: "begin" | "commit" | "rollback" | "raw" | "run" | "insert" }): Promise<unknown>;
  stop(): void;
};

type State = { file: string; writer: BulkWriter | null; failed?: boolean };
const globalKey = "__turnscopeSqliteBulkWriter";
type GlobalWithWriter = typeof globalThis & { [globalKey]?: State };

function startWriter(file: string): BulkWriter {
  const worker = new Worker(source, { eval: true, workerData: { file } });
  worker.unref();
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let gone: Error | null = null;
  const ready = new Promise<void>((resolve) => worker.once("message", () => resolve()));
  worker.on("message", (m: Reply | { ready: true }) => {
    if ("ready" in m) return;
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) p.resolve(m.value);
    else p.reject(new Error(m.message));
    if (pending.size === 0) worker.unref();
  });
  const fail = (error: Error) => {
    gone = error;
    for (const p of pending.values()) p.reject(error);
    pending.clear();
    const g = globalThis as GlobalWithWriter;
    if (g[globalKey]?.writer === writer) g[globalKey] = undefined;
  };
  worker.on("error", fail);
  worker.on("exit", (code) => fail(new Error(`the SQLite write thread stopped (exit ${code})`)));
  const writer: BulkWriter = {
    async send(op) {
      await ready;
      if (gone) throw gone;
      const id = nextId++;
      return new Promise<unknown>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.ref();
        worker.postMessage({ ...op, id });
      });
    },
    stop() {
      worker.postMessage({ op: "close", id: 0 });
      void worker.terminate();
    },
  };
  return writer;
}

/** The write thread of the database at `file` (started when first needed); null for `:memory:`. */
export function bulkWriterFor(file: string): BulkWriter | null {
  if (file === ":memory:") return null;
  const resolved = path.resolve(file);
  const g = globalThis as GlobalWithWriter;
  const state = g[globalKey];
  if (state && state.file === resolved && state.writer) return state.writer;
  state?.writer?.stop();
  const writer = startWriter(resolved);
  g[globalKey] = { file: resolved, writer };
  return writer;
}

/** Stop the write thread (the database is closing). */
export function stopBulkWriter(): void {
  const g = globalThis as GlobalWithWriter;
  g[globalKey]?.writer?.stop();
  g[globalKey] = undefined;
}
