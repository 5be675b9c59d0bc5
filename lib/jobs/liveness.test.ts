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
import { afterEach, describe, expect, it, vi } from "vitest";
import { clusterPool } from "@/lib/cluster/pool";
import { enqueueCellBatches, startQueue, stopQueue, workCells } from "./cell-queue";
import { acquire, type SemaphoreRelease } from "./semaphore";
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
  vi.useRealTimers();
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
    // The old attempt ends: its cleanup must not remove the new attempt's entry. That cleanup has run once
    // its slot is taken again: the worker fetches a batch of 9002 only when fewer than 2 entries are left.
    releaseFirst();
    await until("the old attempt's slot taken by a batch of 9002", () => started.some((s) => s.startsWith("9002:")));
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
    await until("W1 in line", async () => (await sql<{ n: number }>("select count(*)::int as n from turnscope_semaphore where key = $1", [key]))[0].n === 2);
    armed = true;
    let settled: "resolved" | "rejected" | null = null;
    const second = acquire(key, 1, { signal: ctrl.signal }).then(
      (r) => ((settled = "resolved"), r),
      (e: unknown) => ((settled = "rejected"), e),
    );
    await until("abort fired", () => ctrl.signal.aborted, 5_000);
    // Settled while the holder still holds the slot and W1 waits ahead of it, so nothing but the abort can
    // end its wait (the keeper's ticks wake W1, the first in line). Before, it waited until the holder released.
    await until("the aborted acquire() to settle while the slot is held", () => settled !== null, 20_000).catch(() => undefined);
    const settledInTime = settled;
    await held();
    await (await first)();
    await second;
    expect(settledInTime).toBe("rejected"); // before: still waiting, until the holder released
  }, 30_000);

  it("semaphore: two releases heard while the first waiter is trying wake the second waiter too (no 1 s idle slot)", async () => {
    // The keeper's timer (keepPlaces, every second) is what a lost wake-up would wait for: it never fires
    // here, so the second waiter gets its slot only if the releases (or W1's try) woke it. Places in line are
    // leased for 30 s, so no place runs out without the keeper renewing it.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const waitLeaseMs = 30_000;
    const key = `review-wake-${Date.now()}`;
    const h1 = await acquire(key, 2);
    const h2 = await acquire(key, 2);
    let w1Holder: string | null = null;
    let keeperTicks = 0;
    const triesDone = new Map<string, number>();
    patchPoolQuery((orig, text, values) => {
      if (text.includes("NOT holding")) keeperTicks++;
      if (text.includes("turnscope_semaphore_try") && values) {
        const holder = String(values[1]);
        const counted = (result: unknown) => (triesDone.set(holder, (triesDone.get(holder) ?? 0) + 1), result);
        // W1's tries are slow (a busy cluster pool): both notifications arrive while it queries.
        if (holder === w1Holder) return sleep(50).then(() => orig(text, values)).then(counted);
        return (orig(text, values) as Promise<unknown>).then(counted);
      }
      return orig(text, values);
    });
    const newHolders = async (before: Set<string>) =>
      (await sql<{ holder: string; ticket: string }>("select holder, ticket::text from turnscope_semaphore where key = $1 order by ticket", [key])).filter((r) => !before.has(r.holder));
    // Learn W1's holder from its first try.
    const holdersBefore = new Set((await sql<{ holder: string }>("select holder from turnscope_semaphore where key = $1", [key])).map((r) => r.holder));
    const w1 = acquire(key, 2, { waitLeaseMs });
    await until("W1 row", async () => (await newHolders(holdersBefore)).length === 1);
    w1Holder = (await newHolders(holdersBefore))[0].holder;
    const w2 = acquire(key, 2, { waitLeaseMs });
    await until("W2 row, behind W1", async () => (await newHolders(holdersBefore)).length === 2);
    const w2Holder = (await newHolders(holdersBefore))[1].holder;
    // Both have had their first try answered: they wait to be woken, neither is trying.
    await until("W1's and W2's first tries answered", () => (triesDone.get(w1Holder!) ?? 0) >= 1 && (triesDone.get(w2Holder) ?? 0) >= 1);
    await Promise.all([h1(), h2()]);
    let got: [SemaphoreRelease, SemaphoreRelease] | null = null;
    void Promise.all([w1, w2]).then((both) => (got = both));
    await until("both waiters to get a slot", () => got !== null, 20_000).catch(() => undefined);
    expect(keeperTicks).toBe(0); // the keeper did not run: only a release or a try can have woken them
    // before: W2 waited for the keeper's next tick (~950 ms); with no tick, for ever
    expect(got, "both waiters got a slot without the keeper's tick").not.toBeNull();
    const [r1, r2] = got!;
    await r1();
    await r2();
  }, 30_000);
});
