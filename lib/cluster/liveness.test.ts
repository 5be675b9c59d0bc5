/**
 * Races of the queue and the semaphore inside one process, on the PostgreSQL store (TEST_STORE=postgres;
 * skipped, saying so, on SQLite). Each was found by reading the code and reproduced here first:
 *  - a batch whose lease this process lost comes back to it as its next attempt while the old attempt
 *    still runs: the two must not share one entry (the concurrency limit held, the new attempt given
 *    back at stop);
 *  - an abort that lands while a waiter's try is in flight rejects acquire() promptly;
 *  - two releases heard while the first waiter is trying wake the second waiter too.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { clusterPool } from "@/lib/cluster/pool";
import { enqueueCellBatches, startQueue, stopQueue, workCells } from "@/lib/cluster/queue";
import { acquire } from "@/lib/cluster/semaphore";
import { pgRows } from "@/lib/testing/setup/pg-query";
import { until as waitFor } from "@/lib/testing/setup/until";

const url = process.env.DATABASE_URL ?? "";
const onPg = url.startsWith("postgres");
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const sql = <T extends pg.QueryResultRow>(text: string, values: unknown[] = []) => pgRows<T>(url, text, values);

const until = (what: string, check: () => boolean | Promise<boolean>, ms = 10_000) => waitFor(what, check, ms, { every: 25 });

type Query = pg.Pool["query"];
let restore: (() => void) | null = null;
/** Wrap the cluster pool's query (the one semaphore.ts uses). */
function patchPoolQuery(wrap: (orig: Query, text: string, values: unknown[] | undefined) => unknown) {
  const pool = clusterPool(url);
  const orig = pool.query.bind(pool) as Query;
  (pool as unknown as { query: unknown }).query = (text: unknown, values?: unknown) =>
    typeof text === "string" ? wrap(orig, text, values as unknown[] | undefined) : (orig as (t: unknown, v?: unknown) => unknown)(text, values);
  restore = () => {
    (pool as unknown as { query: unknown }).query = orig;
  };
}

afterEach(() => {
  restore?.();
  restore = null;
});

const title = onPg ? "queue and semaphore races in one process" : "queue and semaphore races in one process — SKIPPED: PostgreSQL only (TEST_STORE=postgres)";

describe.skipIf(!onPg)(title, () => {
  it("queue: a batch re-fetched by the same process while its lost-lease attempt still runs must not displace that attempt's bookkeeping", async () => {
    await startQueue(undefined, { visibilityTimeoutSeconds: 60, pollIntervalMs: 100 });
    let running = 0;
    let peak = 0;
    const started: string[] = [];
    let releaseFirst!: () => void;
    const firstGate = new Promise<void>((r) => (releaseFirst = r));
    const waitAbort = (signal: AbortSignal, ms: number) =>
      new Promise<void>((r) => {
        const t = setTimeout(r, ms);
        signal.addEventListener("abort", () => (clearTimeout(t), r()), { once: true });
      });
    const worker = workCells(
      async (job, signal) => {
        running++;
        peak = Math.max(peak, running);
        started.push(`${job.executionId}:${job.attempt}`);
        try {
          if (job.executionId === 9001 && job.attempt === 1) await firstGate; // a handler slow to notice its abort
          else await waitAbort(signal, 5_000);
        } finally {
          running--;
        }
      },
      { concurrency: 2 },
    );
    const [jobId] = await enqueueCellBatches(9001, [[1]]);
    await until("attempt 1", () => started.includes("9001:1"));
    // What pg-boss maintenance does when the lease has run out while this process still lives
    // (event loop stalled, heartbeat queries stuck behind a busy cluster pool, DB blip): back to retry.
    await sql("update pgboss.job set state = 'retry', start_after = now() where id = $1", [jobId]);
    await until("attempt 2 in the same process", () => started.includes("9001:2"));
    await enqueueCellBatches(9002, [[1], [2]]);
    await sleep(1_000);
    const peakWhileBoth = peak;
    // The old attempt ends: its cleanup must not remove the new attempt's entry.
    releaseFirst();
    await sleep(200);
    await worker.stop(0);
    const [row] = await sql<{ state: string; retry_count: number }>("select state::text as state, retry_count from pgboss.job where id = $1", [jobId]);
    await stopQueue({ graceMs: 0 });
    // concurrency 2: never more than 2 handlers at once (3 before attempts had their own entries)
    expect.soft(peakWhileBoth).toBeLessThanOrEqual(2);
    // stop(0) gives running batches back at once ('active' before: the second attempt's entry was gone)
    expect(row.state).toBe("retry");
  }, 30_000);

  it("semaphore: an abort that lands while a waiter's try is in flight rejects acquire() promptly", async () => {
    const key = `review-abort-${Date.now()}`;
    const seen = new Set<string>();
    let target: string | null = null;
    let targetTries = 0;
    const ctrl = new AbortController();
    let armed = false;
    patchPoolQuery((orig, text, values) => {
      if (text.includes("turnscope_semaphore_try") && values) {
        const holder = String(values[1]);
        if (armed && !target && !seen.has(holder)) target = holder;
        seen.add(holder);
        // Lands mid-query, on its first try (a waiter tries again only when a release names it first in
        // line, which behind W1 and the holder does not happen here).
        if (holder === target && ++targetTries === 1) ctrl.abort(new Error("cancelled while trying"));
      }
      return orig(text, values);
    });
    const held = await acquire(key, 1);
    const first = acquire(key, 1); // W1: ahead in line, no signal
    await sleep(300);
    armed = true;
    let settled: "resolved" | "rejected" | null = null;
    const second = acquire(key, 1, { signal: ctrl.signal }).then(
      (r) => ((settled = "resolved"), r),
      (e: unknown) => ((settled = "rejected"), e),
    );
    await until("abort fired", () => ctrl.signal.aborted, 5_000);
    await sleep(2_500); // a few keeper ticks (1 s)
    const settledInTime = settled;
    await held();
    await (await first)();
    await second;
    expect(settledInTime).toBe("rejected"); // before: still waiting, until the holder released
  }, 30_000);

  it("semaphore: two releases heard while the first waiter is trying wake the second waiter too (no 1 s idle slot)", async () => {
    const key = `review-wake-${Date.now()}`;
    const h1 = await acquire(key, 2);
    const h2 = await acquire(key, 2);
    let w1Holder: string | null = null;
    let keeperTick = 0;
    patchPoolQuery((orig, text, values) => {
      if (text.includes("NOT holding")) keeperTick = Date.now();
      // W1's tries are slow (a busy cluster pool): both notifications arrive while it queries.
      if (text.includes("turnscope_semaphore_try") && values && String(values[1]) === w1Holder) {
        return sleep(50).then(() => orig(text, values));
      }
      return orig(text, values);
    });
    // Learn W1's holder from its first try.
    const holdersBefore = new Set((await sql<{ holder: string }>("select holder from turnscope_semaphore where key = $1", [key])).map((r) => r.holder));
    const w1 = acquire(key, 2);
    await until("W1 row", async () => (await sql<{ holder: string }>("select holder from turnscope_semaphore where key = $1", [key])).some((r) => !holdersBefore.has(r.holder)));
    w1Holder = (await sql<{ holder: string }>("select holder from turnscope_semaphore where key = $1", [key])).find((r) => !holdersBefore.has(r.holder))!.holder;
    await sleep(100);
    const w2 = acquire(key, 2);
    await sleep(300);
    // Release just after a keeper tick, so the keeper cannot hide a lost wake-up for ~1 s.
    const tick = keeperTick;
    await until("keeper tick", () => keeperTick !== tick, 3_000);
    await sleep(200); // W1's keeper-driven try (50 ms) is over: W1 is waiting, not trying
    const t0 = Date.now();
    await Promise.all([h1(), h2()]);
    const r1 = await w1;
    const r2 = await w2;
    const waited = Date.now() - t0;
    await r1();
    await r2();
    expect(waited).toBeLessThan(500); // before: ~950 ms (only the keeper's next tick woke the second)
  }, 30_000);
});
