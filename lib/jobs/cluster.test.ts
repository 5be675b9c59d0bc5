/**
 * The cluster features against a real throwaway PostgreSQL test server, with separate Node processes
 * (lib/jobs/testing/cluster-child.ts) as the servers/workers: the job queue shared by N processes,
 * a worker killed mid-batch, the distributed semaphore, cancel, and notify.
 * Skipped, saying why, only where PostgreSQL is not installed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bundleTestChild } from "@/lib/testing/setup/child-bundle";
import { childEvents } from "@/lib/testing/setup/child-events";
import { pgRows as query } from "@/lib/testing/setup/pg-query";
import { until as waitFor } from "@/lib/testing/setup/until";
import { findPgBinDir, startPgTestServer, type PgTestServer } from "@/scripts/pg-test-server.mjs";
import { closeNotifiers, getNotifier, NotifyPayloadTooLargeError } from "@/lib/cluster/notify";
import { closeClusterPools } from "@/lib/cluster/pool";
import {
  cancelExecutionJobs,
  cellQueueName,
  enqueueCellBatches,
  executionJobCounts,
  openQueueClient,
  startQueue,
  stopQueue,
  workCells,
} from "./cell-queue";
import { acquire, semaphoreHolders, semaphoreTries } from "./semaphore";

const binDir = findPgBinDir();
const title = binDir
  ? "cluster: queue, semaphore, notify across processes"
  : "cluster — SKIPPED: no PostgreSQL binaries (install Debian's postgresql package or set PG_BINDIR)";
if (!binDir) console.warn(title);

// Bundled once per run (~0.2 s): a bundled child is ready in ~0.6 s, the same file under tsx in ~1.8 s,
// and the tests start a dozen of them.
let childBundle = "";
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type ChildEvent = { worker: string; event: string; [key: string]: unknown };
type Child = {
  proc: ChildProcess;
  events: ChildEvent[];
  waitFor(pred: (e: ChildEvent) => boolean, timeoutMs?: number): Promise<ChildEvent>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

const children: Child[] = [];

function startChild(mode: string, env: Record<string, string>): Child {
  const proc = spawn(process.execPath, ["--conditions=react-server", childBundle, mode], {
    cwd: process.cwd(),
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const waiters = new Set<() => void>();
  let stderr = "";
  const events = childEvents<ChildEvent>(proc, () => {
    for (const w of [...waiters]) w();
  });
  proc.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on("exit", (code, signal) => {
      resolve({ code, signal });
      for (const w of [...waiters]) w();
    }),
  );
  const child: Child = {
    proc,
    events,
    exited,
    waitFor(pred, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const error = events.find((e) => e.event === "error");
          if (error) return finish(() => reject(new Error(`child ${mode} failed: ${String(error.message)}`)));
          const hit = events.find(pred);
          if (hit) return finish(() => resolve(hit));
          if (proc.exitCode !== null || proc.signalCode !== null) {
            finish(() => reject(new Error(`child ${mode} exited (${proc.exitCode ?? proc.signalCode}) before the event\n${stderr}`)));
          }
        };
        const timer = setTimeout(() => finish(() => reject(new Error(`child ${mode}: timed out waiting\n${stderr}`))), timeoutMs);
        function finish(then: () => void) {
          clearTimeout(timer);
          waiters.delete(check);
          then();
        }
        waiters.add(check);
        check();
      });
    },
  };
  children.push(child);
  return child;
}


let dbCounter = 0;
async function freshDatabase(cluster: PgTestServer): Promise<string> {
  const name = `cluster_${process.pid}_${++dbCounter}`;
  await query(cluster.url, `create database "${name}"`);
  const url = cluster.url.replace(/\/[^/]*$/, `/${name}`);
  await query(
    url,
    `create table test_handled (item int not null, worker text not null, job_id uuid not null, execution_id int not null,
       at timestamptz not null default clock_timestamp())`,
  );
  await query(url, "create table test_sem_probe (key text primary key, current int not null default 0, peak int not null default 0, total int not null default 0)");
  return url;
}

const waitUntil = (what: string, check: () => Promise<boolean>, timeoutMs: number) => waitFor(what, check, timeoutMs, { every: 100 });

const batchesOf = (items: number[], size: number) => {
  const out: number[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

async function handledCount(url: string, executionId: number): Promise<{ rows: number; distinct: number }> {
  const [row] = await query<{ rows: number; distinct: number }>(
    url,
    "select count(*)::int as rows, count(distinct item)::int as distinct from test_handled where execution_id = $1",
    [executionId],
  );
  return row;
}

describe.skipIf(!binDir)(title, () => {
  let cluster: PgTestServer;

  beforeAll(async () => {
    childBundle = await bundleTestChild("lib/jobs/testing/cluster-child.ts", "esm");
    cluster = await startPgTestServer();
  }, 60_000);

  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill("SIGKILL");
      await child.exited;
    }
    await stopQueue({ graceMs: 0 });
    await closeNotifiers();
    await closeClusterPools();
  });

  afterAll(async () => {
    await cluster?.stop();
    fs.rmSync(childBundle, { force: true });
  });

  it("several queue clients starting at once against an empty database all start, and create the queue once", async () => {
    const url = await freshDatabase(cluster);
    // Each client has its own pool and sessions, as separate processes would.
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, () => openQueueClient(url, {})));
    try {
      expect(outcomes.filter((o) => o.status === "rejected").map((o) => String((o as PromiseRejectedResult).reason))).toEqual([]);
      const queues = await query<{ name: string; expire_seconds: number }>(url, "select name, expire_seconds from pgboss.queue");
      expect(queues).toEqual([{ name: cellQueueName, expire_seconds: 60 }]);
      // Cancel and the counts look jobs up by executionId through an index of their own.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      let plan: Array<{ "QUERY PLAN": string }>;
      try {
        await client.query("set enable_seqscan = off");
        const sql = `explain select id from pgboss.job where name = '${cellQueueName}' and data->>'executionId' = '7'`;
        plan = (await client.query<{ "QUERY PLAN": string }>(sql)).rows;
      } finally {
        await client.end();
      }
      expect(plan.map((r) => r["QUERY PLAN"]).join("\n")).toContain("turnscope_cells_execution_idx");
    } finally {
      for (const o of outcomes) if (o.status === "fulfilled") await o.value.boss.stop({ graceful: false, close: true });
    }
  }, 60_000);

  it("(a) three worker processes share 2,000 items and handle each exactly once", async () => {
    const url = await freshDatabase(cluster);
    // Started together against an empty database: they create pg-boss's schema and queue at once.
    const workers = ["a1", "a2", "a3"].map((name) =>
      startChild("queue", { DATABASE_URL: url, WORKER_NAME: name, WORKER_CONCURRENCY: "3", ITEM_DELAY_MS: "1" }),
    );
    await Promise.all(workers.map((w) => w.waitFor((e) => e.event === "ready", 30_000)));

    await startQueue(url);
    const items = range(1, 2000);
    const ids = await enqueueCellBatches(101, batchesOf(items, 20));
    expect(ids).toHaveLength(100);
    await waitUntil("all jobs completed", async () => (await executionJobCounts(101)).completed === 100, 30_000);

    const [dupes] = await query<{ n: number }>(
      url,
      "select count(*)::int as n from (select item from test_handled group by item having count(*) <> 1) d",
    );
    expect(dupes.n).toBe(0);
    expect(await handledCount(url, 101)).toEqual({ rows: 2000, distinct: 2000 });
    const perWorker = await query<{ worker: string; n: number }>(url, "select worker, count(*)::int as n from test_handled group by worker order by worker");
    expect(perWorker.map((r) => r.worker)).toEqual(["a1", "a2", "a3"]);
    expect(await executionJobCounts(101)).toEqual({ created: 0, retry: 0, active: 0, completed: 100, cancelled: 0, failed: 0 });
  }, 60_000);

  it("(b) a worker SIGKILLed mid-batch loses nothing: its batch is worked again after the visibility timeout", async () => {
    const url = await freshDatabase(cluster);
    const visibilitySeconds = 2;
    const common = { DATABASE_URL: url, VISIBILITY_SECONDS: String(visibilitySeconds), ITEM_DELAY_MS: "2" };
    const victim = startChild("queue", { ...common, WORKER_NAME: "victim", WORKER_CONCURRENCY: "1", HANG_AFTER: "5" });
    const others = ["b1", "b2"].map((name) => startChild("queue", { ...common, WORKER_NAME: name, WORKER_CONCURRENCY: "3" }));
    await Promise.all([victim, ...others].map((w) => w.waitFor((e) => e.event === "ready", 30_000)));

    await startQueue(url, { visibilityTimeoutSeconds: visibilitySeconds });
    await enqueueCellBatches(202, batchesOf(range(1, 2000), 20));
    const hanging = await victim.waitFor((e) => e.event === "hanging", 20_000);
    const started = victim.events.find((e) => e.event === "start" && e.jobId === hanging.jobId)!;
    const victimItems = started.items as number[];
    victim.proc.kill("SIGKILL");
    const killedAt = Date.now();
    await victim.exited;

    await waitUntil("all jobs completed", async () => (await executionJobCounts(202)).completed === 100, 30_000);
    expect((await handledCount(url, 202)).distinct).toBe(2000);

    // Outside the killed batch every item was handled exactly once.
    const [dupes] = await query<{ n: number }>(
      url,
      "select count(*)::int as n from (select item from test_handled where not (item = any($1)) group by item having count(*) <> 1) d",
      [victimItems],
    );
    expect(dupes.n).toBe(0);
    // The killed batch was taken again, by another process, once its lease ran out (renewed every T/3
    // before the kill, so it expired between 2T/3 and T after it), and completed once.
    const redo = await query<{ worker: string; first: Date; n: number }>(
      url,
      "select worker, min(at) as first, count(*)::int as n from test_handled where job_id = $1 and worker <> 'victim' group by worker",
      [hanging.jobId],
    );
    expect(redo).toHaveLength(1);
    expect(redo[0].n).toBe(victimItems.length);
    const delay = redo[0].first.getTime() - killedAt;
    console.log(`queue: batch of a SIGKILLed worker taken again ${delay} ms after the kill (visibility timeout ${visibilitySeconds} s)`);
    expect(delay).toBeGreaterThanOrEqual((visibilitySeconds * 1000 * 2) / 3 - 300);
    expect(delay).toBeLessThan(visibilitySeconds * 1000 * 1.5 + 3_000);
    const [victimRows] = await query<{ n: number }>(url, "select count(*)::int as n from test_handled where worker = 'victim' and job_id = $1", [
      hanging.jobId,
    ]);
    expect(victimRows.n).toBe(5);
    const retried = others.flatMap((w) => w.events).filter((e) => e.event === "start" && e.jobId === hanging.jobId);
    expect(retried.map((e) => e.attempt)).toEqual([2]);
  }, 60_000);

  it("a live worker keeps a batch that runs longer than the visibility timeout (its heartbeat renews the lease)", async () => {
    const url = await freshDatabase(cluster);
    const common = { DATABASE_URL: url, VISIBILITY_SECONDS: "2" };
    const slow = startChild("queue", { ...common, WORKER_NAME: "slow", WORKER_CONCURRENCY: "1", ITEM_DELAY_MS: "500" });
    const idle = startChild("queue", { ...common, WORKER_NAME: "idle", GATED: "1" });
    await slow.waitFor((e) => e.event === "ready", 30_000);
    await startQueue(url, { visibilityTimeoutSeconds: 2 });
    const [jobId] = await enqueueCellBatches(505, [range(1, 10)]);
    await slow.waitFor((e) => e.event === "start");
    // Another worker is idle and polling: without the heartbeat it would take the batch after ~2 s.
    await idle.waitFor((e) => e.event === "loaded", 30_000);
    idle.proc.stdin!.write("go\n");
    await idle.waitFor((e) => e.event === "ready", 30_000);
    await slow.waitFor((e) => e.event === "done", 15_000);
    // The child says "done" as its handler ends, before its worker records the batch completed.
    await waitUntil("the batch recorded completed", async () => (await executionJobCounts(505)).completed === 1, 15_000);
    expect(await executionJobCounts(505)).toMatchObject({ completed: 1, retry: 0, active: 0 });
    expect(idle.events.filter((e) => e.event === "start")).toEqual([]);
    expect(slow.events.filter((e) => e.event === "start").map((e) => [e.jobId, e.attempt])).toEqual([[jobId, 1]]);
    expect(await handledCount(url, 505)).toEqual({ rows: 10, distinct: 10 });
  }, 60_000);

  it("a wake-up heard while every slot is busy (a run enqueued meanwhile) does not stall the process: its batch finishes and the next is taken", async () => {
    // Seen as a worker of a queued run that took its batches and then did nothing: its loop spun on the
    // unconsumed wake-up, no timer ran again, and other processes got its batches after the lease ran out.
    const url = await freshDatabase(cluster);
    const busy = startChild("queue", { DATABASE_URL: url, VISIBILITY_SECONDS: "60", WORKER_NAME: "busy", WORKER_CONCURRENCY: "1", ITEM_DELAY_MS: "100" });
    await busy.waitFor((e) => e.event === "ready", 30_000);
    await startQueue(url, { visibilityTimeoutSeconds: 60 });
    const [first] = await enqueueCellBatches(606, [range(1, 5)]);
    await busy.waitFor((e) => e.event === "start" && e.jobId === first);
    // Its one slot is taken: this enqueue's NOTIFY wakes it with nothing to fetch.
    const [second] = await enqueueCellBatches(607, [range(1, 5)]);
    await busy.waitFor((e) => e.event === "done" && e.jobId === first, 10_000);
    await busy.waitFor((e) => e.event === "done" && e.jobId === second, 10_000);
    // "done" is said as a handler ends, before the worker records the batch completed.
    await waitUntil("the first batch recorded completed", async () => (await executionJobCounts(606)).completed === 1, 15_000);
    expect(await executionJobCounts(606)).toMatchObject({ completed: 1, retry: 0, active: 0 });
    expect(await handledCount(url, 607)).toEqual({ rows: 5, distinct: 5 });
  }, 60_000);

  it("SIGTERM stops a worker cleanly and returns its running batch to the queue at once", async () => {
    const url = await freshDatabase(cluster);
    // A long visibility timeout: the batch must come back because the worker gave it back, not by expiry.
    const common = { DATABASE_URL: url, VISIBILITY_SECONDS: "60", SHUTDOWN_GRACE_MS: "300" };
    const leaving = startChild("queue", { ...common, WORKER_NAME: "leaving", WORKER_CONCURRENCY: "1", HANG_AFTER: "3" });
    const staying = startChild("queue", { ...common, WORKER_NAME: "staying", GATED: "1" });
    await leaving.waitFor((e) => e.event === "ready", 30_000);
    await startQueue(url, { visibilityTimeoutSeconds: 60 });
    await enqueueCellBatches(303, [range(1, 10)]);
    const hanging = await leaving.waitFor((e) => e.event === "hanging");
    await staying.waitFor((e) => e.event === "loaded", 30_000);
    staying.proc.stdin!.write("go\n");
    await staying.waitFor((e) => e.event === "ready", 30_000);

    const termAt = Date.now();
    leaving.proc.kill("SIGTERM");
    expect(await leaving.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - termAt).toBeLessThan(5_000);
    await staying.waitFor((e) => e.event === "done" && e.jobId === hanging.jobId, 10_000);
    expect(Date.now() - termAt).toBeLessThan(10_000);
    // "done" is said as the handler ends, before the worker records the batch completed.
    await waitUntil("the batch recorded completed", async () => (await executionJobCounts(303)).completed === 1, 15_000);
    expect(await executionJobCounts(303)).toMatchObject({ completed: 1, failed: 0, active: 0 });
    const staid = staying.events.find((e) => e.event === "start" && e.jobId === hanging.jobId)!;
    // Given back without spending an attempt on the limit.
    expect(staid.attempt).toBe(2);
  }, 60_000);

  it("(c) semaphore: 3 processes × 10 acquirers never exceed the limit of 4, nobody starves, a hung holder's slot frees after its lease", async () => {
    const url = await freshDatabase(cluster);
    const rounds = 4;
    await query(url, "insert into test_sem_probe (key) values ('limit4')");
    const procs = ["s1", "s2", "s3"].map((name) =>
      startChild("semaphore", { DATABASE_URL: url, WORKER_NAME: name, SEM_KEY: "limit4", SEM_LIMIT: "4", SEM_ACQUIRERS: "10", SEM_ROUNDS: String(rounds), SEM_HOLD_MS: "40" }),
    );
    // Started now because loading takes seconds; it takes a slot of another key ("hold") at once.
    const leaseMs = 1_200;
    const holder = startChild("sem-hold", { DATABASE_URL: url, SEM_KEY: "hold", SEM_LEASE_MS: String(leaseMs) });
    await Promise.all(procs.map((p) => p.waitFor((e) => e.event === "ready", 30_000)));
    const go = performance.now();
    for (const p of procs) p.proc.stdin!.write("go\n");
    const finished = await Promise.all(procs.map((p) => p.waitFor((e) => e.event === "finished", 40_000)));
    const elapsed = performance.now() - go;
    console.log(
      `semaphore: ${3 * 10 * rounds} holds of 40 ms through 4 slots in ${Math.round(elapsed)} ms ` +
        `(${Math.round((3 * 10 * rounds * 40) / 4)} ms if slots never sat idle)`,
    );
    const [probe] = await query<{ current: number; peak: number; total: number }>(url, "select current, peak, total from test_sem_probe where key = 'limit4'");
    expect(probe).toEqual({ current: 0, peak: 4, total: 3 * 10 * rounds });
    // Every acquirer of every process got all its rounds.
    for (const p of procs) {
      for (let acquirer = 0; acquirer < 10; acquirer++) {
        expect(p.events.filter((e) => e.event === "round" && e.acquirer === acquirer)).toHaveLength(rounds);
      }
    }
    const maxWait = Math.max(...finished.map((f) => Number(f.maxWaitMs)));
    console.log(`semaphore: longest wait of one acquirer (30 contending for 4 slots, 40 ms holds): ${maxWait} ms`);
    const tries = finished.reduce((sum, f) => sum + Number(f.tries), 0);
    console.log(`semaphore: ${tries} tries for ${3 * 10 * rounds} holds (${(tries / (3 * 10 * rounds)).toFixed(2)} per hold)`);
    // A release wakes only the waiters it names first in line, in whichever process: about two tries per
    // hold (the one that found the slots taken, the one it was named for), plus the keepers' timer ticks.
    // Waking the first waiter of every process took 4.8 here with three processes (more with more).
    expect(tries / (3 * 10 * rounds)).toBeLessThan(3);
    expect(await semaphoreHolders("limit4", url)).toBe(0);

    // Overhead of an uncontended acquire + release from this process.
    const n = 100;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await (await acquire("overhead", 10, { url }))();
    console.log(`semaphore: uncontended acquire + release = ${((performance.now() - t0) / n).toFixed(2)} ms`);

    // A waiter that gives up (its signal aborts) leaves the line and does not hold up the next one.
    const first = await acquire("abort", 1, { url });
    await expect(acquire("abort", 1, { url, signal: AbortSignal.timeout(300) })).rejects.toThrow(/aborted due to timeout/);
    const [rows] = await query<{ n: number }>(url, "select count(*)::int as n from turnscope_semaphore where key = 'abort'");
    expect(rows.n).toBe(1);
    await first();
    // The next one takes the slot on its first try: nobody is left in line ahead of it (a place the aborted
    // waiter kept would hold it up until that place's lease ran out, trying again at each keeper tick). This
    // process makes no other tries meanwhile (the contending acquirers are child processes, and done).
    const triesBefore = semaphoreTries();
    await (await acquire("abort", 1, { url }))();
    expect(semaphoreTries() - triesBefore).toBe(1);
    await expect(acquire("abort", 0, { url })).rejects.toThrow(/positive integer/);

    // A holder that hangs (SIGSTOP: it stops renewing, its connections stay open, so only the lease
    // can free its slot): the slot stays taken while it lives (it renews the lease past leaseMs), then
    // frees once the lease runs out after it stopped.
    await holder.waitFor((e) => e.event === "held", 30_000);
    let acquiredAt = 0;
    const waiting = acquire("hold", 1, { url, leaseMs }).then((release) => {
      acquiredAt = Date.now();
      return release;
    });
    await sleep(leaseMs * 2);
    expect(acquiredAt).toBe(0);
    holder.proc.kill("SIGSTOP");
    const stoppedAt = Date.now();
    const release = await waiting;
    const freedAfter = acquiredAt - stoppedAt;
    console.log(`semaphore: slot of a hung holder (lease ${leaseMs} ms) free after ${freedAfter} ms`);
    expect(freedAfter).toBeGreaterThanOrEqual((leaseMs * 2) / 3 - 200);
    expect(freedAfter).toBeLessThan(leaseMs + 1_500);
    await release();
  }, 60_000);

  it("semaphore: a shutdown frees the slots its process holds at once, not after their lease", async () => {
    const url = await freshDatabase(cluster);
    await startQueue(url, { visibilityTimeoutSeconds: 60 });
    // Held as a run's cells hold them when SIGTERM comes: a lease of a minute, never released by hand.
    await acquire("shutdown-run", 2, { url, leaseMs: 60_000 });
    await acquire("shutdown-run", 2, { url, leaseMs: 60_000 });
    // A server's drain stops its worker (not the whole queue client): that frees them too.
    const worker = workCells(async () => undefined, { concurrency: 1 });
    await worker.stop(0);
    const [rows] = await query<{ n: number }>(url, "select count(*)::int as n from turnscope_semaphore where key = 'shutdown-run'");
    expect(rows.n).toBe(0);
    await acquire("shutdown-queue", 1, { url, leaseMs: 60_000 });
    await stopQueue({ graceMs: 0 });
    const [left] = await query<{ n: number }>(url, "select count(*)::int as n from turnscope_semaphore where key = 'shutdown-queue'");
    expect(left.n).toBe(0);
    // Taken on the first try: the slots were free at once, not after their minute's lease.
    const triesBefore = semaphoreTries();
    await (await acquire("shutdown-run", 1, { url, signal: AbortSignal.timeout(5_000) }))();
    expect(semaphoreTries() - triesBefore).toBe(1);
  });

  it("semaphore: the slot of a SIGKILLed holder frees as soon as its connections close, not after its lease", async () => {
    // A run's batch_size slots all held by a worker when it was SIGKILLed stalled every other process
    // of the run for the whole lease (the visibility timeout).
    const url = await freshDatabase(cluster);
    const leaseMs = 30_000;
    const dead = startChild("sem-hold", { DATABASE_URL: url, SEM_KEY: "dead-holder", SEM_LEASE_MS: String(leaseMs) });
    await dead.waitFor((e) => e.event === "held", 30_000);
    let acquiredAt = 0;
    const next = acquire("dead-holder", 1, { url, leaseMs }).then((release) => {
      acquiredAt = Date.now();
      return release;
    });
    await waitUntil("this process to wait behind it", async () => (await query<{ n: number }>(url, "select count(*)::int as n from turnscope_semaphore where key = 'dead-holder'"))[0].n === 2, 10_000);
    dead.proc.kill("SIGKILL");
    await dead.exited;
    const killedAt = Date.now();
    const release = await next;
    const waited = acquiredAt - killedAt;
    console.log(`semaphore: slot of a SIGKILLed holder (lease ${leaseMs} ms) taken ${waited} ms after the kill`);
    expect(waited).toBeLessThan(leaseMs / 3);
    await release();
  }, 60_000);

  it("semaphore: the places in line of a SIGKILLed process's waiters free within seconds, not after a holder's lease", async () => {
    // Issue 22: a dead process's waiting rows kept their places ahead of the living for the whole lease
    // (the visibility timeout), and every other process of the run stood still behind them.
    const url = await freshDatabase(cluster);
    const leaseMs = 20_000;
    const first = await acquire("line", 1, { url, leaseMs });
    const dead = startChild("sem-hold", { DATABASE_URL: url, SEM_KEY: "line", SEM_LEASE_MS: String(leaseMs) });
    await waitUntil("the child to wait in line", async () => (await query<{ n: number }>(url, "select count(*)::int as n from turnscope_semaphore where key = 'line'"))[0].n === 2, 30_000);
    let acquiredAt = 0;
    const next = acquire("line", 1, { url, leaseMs }).then((release) => {
      acquiredAt = Date.now();
      return release;
    });
    await waitUntil("this process to wait behind it", async () => (await query<{ n: number }>(url, "select count(*)::int as n from turnscope_semaphore where key = 'line'"))[0].n === 3, 10_000);
    dead.proc.kill("SIGKILL");
    await dead.exited;
    expect(dead.events.some((e) => e.event === "held")).toBe(false);
    const releasedAt = Date.now();
    await first();
    const release = await next;
    const waited = acquiredAt - releasedAt;
    console.log(`semaphore: a slot freed behind a SIGKILLed waiter was taken after ${waited} ms (holders' lease ${leaseMs} ms)`);
    expect(waited).toBeLessThan(leaseMs / 2);
    await release();
  }, 60_000);

  it("(d) cancel: queued jobs of a cancelled execution are never worked, and a running batch is aborted in another process", async () => {
    const url = await freshDatabase(cluster);
    const remote = startChild("queue", { DATABASE_URL: url, WORKER_NAME: "remote", ITEM_DELAY_MS: "100", GATED: "1" });
    await startQueue(url, { pollIntervalMs: 500 });
    await enqueueCellBatches(401, batchesOf(range(1, 50), 10));
    await enqueueCellBatches(402, batchesOf(range(1001, 50), 10));
    expect(await cancelExecutionJobs(401)).toBe(5);

    const seen: number[] = [];
    const worker = workCells(
      async (job) => {
        seen.push(job.executionId);
      },
      { concurrency: 2 },
    );
    await waitUntil("execution 402 done", async () => (await executionJobCounts(402)).completed === 5, 20_000);
    await sleep(600);
    expect(seen.filter((e) => e === 401)).toEqual([]);
    expect(seen.filter((e) => e === 402)).toHaveLength(5);
    expect(await executionJobCounts(401)).toMatchObject({ cancelled: 5, created: 0, active: 0, completed: 0 });
    await worker.stop(0);

    // Queue overhead per batch (enqueue, claim, heartbeat, complete) with a handler that does nothing.
    const overhead = workCells(async () => undefined, { concurrency: 4 });
    const t0 = performance.now();
    await enqueueCellBatches(404, batchesOf(range(1, 200), 1));
    await waitUntil("200 empty batches", async () => (await executionJobCounts(404)).completed === 200, 20_000);
    console.log(`queue: 200 empty batches through one process (concurrency 4) in ${Math.round(performance.now() - t0)} ms`);
    await overhead.stop(0);

    // A batch running in another process stops when its execution is cancelled here.
    await remote.waitFor((e) => e.event === "loaded", 30_000);
    remote.proc.stdin!.write("go\n");
    await remote.waitFor((e) => e.event === "ready", 30_000);
    await enqueueCellBatches(403, [range(1, 60)]);
    await remote.waitFor((e) => e.event === "start" && e.executionId === 403);
    await sleep(500);
    const cancelledAt = Date.now();
    expect(await cancelExecutionJobs(403)).toBe(1);
    await sleep(1_000);
    const afterCancel = await handledCount(url, 403);
    await sleep(1_000);
    expect(await handledCount(url, 403)).toEqual(afterCancel);
    expect(afterCancel.rows).toBeLessThan(60);
    const [last] = await query<{ at: Date }>(url, "select max(at) as at from test_handled where execution_id = 403");
    expect(last.at.getTime() - cancelledAt).toBeLessThan(500);
    expect(remote.events.some((e) => e.event === "done")).toBe(false);
    expect(await executionJobCounts(403)).toMatchObject({ cancelled: 1, active: 0, completed: 0 });
  }, 60_000);

  it("runs share the workers: batches of a later run are interleaved with an earlier run's backlog", async () => {
    const url = await freshDatabase(cluster);
    await startQueue(url, { pollIntervalMs: 500 });
    await enqueueCellBatches(701, [[0], [1], [2], [3], [4]]);
    await enqueueCellBatches(702, [[0], [1], [2]]);
    const order: string[] = [];
    const worker = workCells(
      async (job) => {
        order.push(`${job.executionId}:${String(job.cells[0])}`);
      },
      { concurrency: 1 },
    );
    await waitUntil("all done", async () => order.length === 8, 15_000);
    await worker.stop(0);
    expect(order).toEqual(["701:0", "702:0", "701:1", "702:1", "701:2", "702:2", "701:3", "701:4"]);
  }, 30_000);

  it("a batch whose handler throws is retried, and ends failed once its attempts are spent", async () => {
    const url = await freshDatabase(cluster);
    await startQueue(url, { pollIntervalMs: 500 });
    const attempts: Array<[number, number, boolean]> = [];
    const worker = workCells(
      async (job) => {
        attempts.push([job.executionId, job.attempt, job.finalAttempt]);
        // Execution 601 fails its first attempt only; 602 always fails.
        if (job.executionId === 602 || job.attempt === 1) throw new Error(`judge unreachable (attempt ${job.attempt})`);
      },
      { concurrency: 2 },
    );
    await enqueueCellBatches(601, [[1]]);
    await enqueueCellBatches(602, [[2]], { retryLimit: 1 });
    await waitUntil(
      "both settled",
      async () => (await executionJobCounts(601)).completed === 1 && (await executionJobCounts(602)).failed === 1,
      15_000,
    );
    await worker.stop(0);
    expect(attempts.filter(([e]) => e === 601)).toEqual([
      [601, 1, false],
      [601, 2, false],
    ]);
    expect(attempts.filter(([e]) => e === 602)).toEqual([
      [602, 1, false],
      [602, 2, true],
    ]);
    const [failed] = await query<{ output: { message: string } }>(url, "select output from pgboss.job where state = 'failed'");
    expect(failed.output.message).toBe("judge unreachable (attempt 2)");
  }, 30_000);

  it("(e) notify: a round trip between two processes, oversized payloads refused, listening survives a dropped connection", async () => {
    const url = await freshDatabase(cluster);
    const echo = startChild("echo", { DATABASE_URL: url });
    await echo.waitFor((e) => e.event === "ready", 30_000);
    const notifier = getNotifier(url);
    const pongs: unknown[] = [];
    await notifier.subscribe("test_pong", (payload) => pongs.push(payload));

    await notifier.publish("test_ping", "hello ✓");
    await waitUntil("pong", async () => pongs.length === 1, 5_000);
    expect(pongs[0]).toEqual({ echo: "hello ✓", from: echo.proc.pid });

    // 8000 bytes is refused before reaching PostgreSQL, with a message that says what to do; 7999 passes.
    await expect(notifier.publish("test_ping", "x".repeat(7999))).rejects.toBeInstanceOf(NotifyPayloadTooLargeError);
    await expect(notifier.publish("test_ping", "é".repeat(4000))).rejects.toThrow(/at most 7999.*Publish ids/);
    await expect(notifier.publish("Bad-Channel", 1)).rejects.toThrow(/Invalid notify channel/);
    const own: unknown[] = [];
    await notifier.subscribe("test_big", (payload) => own.push(payload));
    await notifier.publish("test_big", "y".repeat(7997));
    await waitUntil("big payload", async () => own.length === 1, 5_000);
    expect((own[0] as string).length).toBe(7997);

    // The server drops our listening connection: we reconnect, LISTEN again, and say so.
    let reconnected = 0;
    notifier.onReconnect(() => reconnected++);
    const pid = await notifier.listenerPid();
    await query(url, "select pg_terminate_backend($1)", [pid]);
    await waitUntil("reconnect", async () => reconnected === 1, 10_000);
    expect(await notifier.listenerPid()).not.toBe(pid);
    await notifier.publish("test_ping", "again");
    await waitUntil("second pong", async () => pongs.length === 2, 5_000);
    expect(pongs[1]).toEqual({ echo: "again", from: echo.proc.pid });
  }, 30_000);
});
