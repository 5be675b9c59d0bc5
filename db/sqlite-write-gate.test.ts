/**
 * A thread that writes with a SQLite connection of its own (db/sqlite-thread-store.ts, the input pool
 * storing an OTLP export's spans) holds the write gate while its transaction is open; the server's writes
 * (db/dialect/sqlite.ts) wait for it asynchronously. Without the gate a server write meeting the thread's
 * lock waited in SQLite's busy handler on the event loop: no request answered meanwhile, and here, where
 * the thread ends its transaction only when the loop tells it to, the write failed after busy_timeout.
 */
import path from "node:path";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { databaseFile, getDb } from "./sqlite-database";
import { writeGate } from "./sqlite-write-gate";
import { rawRows, rawRun, transaction, raw } from "./store";

/** A thread that opens a transaction with threadTransaction, inserts a row and keeps it open until released. */
function holdingThread(file: string) {
  const release = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `require("tsx/cjs/api").register();
     const { parentPort, workerData } = require("node:worker_threads");
     const { threadTransaction } = require(workerData.module);
     parentPort.on("message", () => {
       threadTransaction({ file: workerData.file, gate: workerData.gate }, function* () {
         yield { kind: "rawRun", text: "insert into gate_probe (who) values ('thread')", params: [] };
         parentPort.postMessage("holding");
         Atomics.wait(workerData.release, 0, 0);
       });
       parentPort.postMessage("committed");
     });`,
    { eval: true, workerData: { module: path.join(import.meta.dirname, "sqlite-thread-store.ts"), file, gate: writeGate(), release } },
  );
  const next = (what: string) => new Promise<void>((resolve, reject) => {
    const on = (m: unknown) => m === what && (worker.off("message", on), resolve());
    worker.on("message", on);
    worker.once("error", reject);
  });
  return {
    async hold() {
      const holding = next("holding");
      worker.postMessage("store");
      await holding;
    },
    async release() {
      const committed = next("committed");
      Atomics.store(release, 0, 1);
      Atomics.notify(release, 0);
      await committed;
    },
    stop: () => worker.terminate(),
  };
}

const threads: Array<{ stop(): Promise<number> }> = [];
afterEach(async () => {
  await Promise.all(threads.splice(0).map((t) => t.stop()));
});

describe.skipIf(Boolean(process.env.DATABASE_URL))("SQLite's writer shared with a thread, off the event loop", () => {
  it("the server's writes wait for a thread's open transaction while the loop turns, then are written after it", async () => {
    getDb().$client.exec("create table gate_probe (id integer primary key, who text)");
    const thread = holdingThread(databaseFile()!);
    threads.push(thread);
    await thread.hold();

    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    let written = 0;
    const writes = [
      rawRun("insert into gate_probe (who) values ('server: a statement')").then(() => written++),
      transaction(function* () {
        yield* raw("insert into gate_probe (who) values ('server: a transaction') returning id");
      }).then(() => written++),
    ];
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The loop went on turning (a busy wait on it would have let no timer fire), and nothing was written yet.
      expect(ticks).toBeGreaterThan(5);
      expect(written).toBe(0);
      // Reads are not held: WAL shows what was committed before the thread's transaction.
      expect(await rawRows("select who from gate_probe")).toEqual([]);
      await thread.release();
      await Promise.all(writes);
    } finally {
      clearInterval(ticker);
    }
    expect((await rawRows<{ who: string }>("select who from gate_probe order by id")).map((r) => r.who)).toEqual([
      "thread",
      "server: a statement",
      "server: a transaction",
    ]);
  });

  it("a thread stopped inside its transaction leaves the writer and the gate free", async () => {
    getDb().$client.exec("create table if not exists gate_probe (id integer primary key, who text); delete from gate_probe");
    const { threadStopped } = await import("./sqlite-write-gate");
    const thread = holdingThread(databaseFile()!);
    await thread.hold();
    const gate = writeGate();
    const holder = Atomics.load(gate, 0);
    expect(holder).toBeGreaterThan(0);
    await thread.stop();
    // What the input pool does when one of its threads exits (lib/input-pool.ts).
    threadStopped(holder);
    const started = performance.now();
    await rawRun("insert into gate_probe (who) values ('after the thread')");
    expect(performance.now() - started).toBeLessThan(1000);
    expect((await rawRows<{ who: string }>("select who from gate_probe")).map((r) => r.who)).toEqual(["after the thread"]);
  });
});
