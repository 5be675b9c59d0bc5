/**
 * A claim queue (lib/jobs/claims.ts) on a store of its own kept in memory, worked by two owners (two
 * queues of one process standing for two processes): a row is never worked by both; a claim lost to
 * another owner and a cancel from another owner stop the work through its signal; drain lets work in
 * flight finish for its grace, then aborts the rest, whose rows go back for another owner to claim.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { dialect } from "@/db/dialect";
import { getNotifier } from "@/lib/cluster/notify";
import { resetConfig } from "@/lib/config";
import { until } from "@/lib/testing/setup/until";
import { defineClaimQueue, type ClaimContext, type ClaimQueue, type ClaimStore } from "./claims";

type Row = { id: number; status: "pending" | "processing" | "done" | "cancelled" | "failed"; claimedBy: string | null; leaseUntil: string | null; attempts: number; error: string | null };

/** Rows by id, claimed and renewed as the repository of a real kind does it, each update at once (no await inside). */
function memoryStore() {
  const rows = new Map<number, Row>();
  const released: string[] = [];
  const active = (r: Row) => r.status === "pending" || r.status === "processing";
  const free = (r: Row, now: string) => active(r) && (r.claimedBy === null || (r.leaseUntil ?? "") < now);
  const store: ClaimStore<Row> = {
    async claim(owner, now, leaseUntil, maxAttempts, limit) {
      const claimed = [...rows.values()].sort((a, b) => a.id - b.id).filter((r) => free(r, now) && r.attempts < maxAttempts).slice(0, limit);
      for (const row of claimed) Object.assign(row, { claimedBy: owner, leaseUntil, status: "processing", attempts: row.attempts + 1 });
      return claimed.map((row) => ({ ...row }));
    },
    async renew(owner, ids, leaseUntil) {
      const kept = ids.filter((id) => rows.get(id)?.claimedBy === owner && rows.get(id)?.status === "processing");
      for (const id of kept) rows.get(id)!.leaseUntil = leaseUntil;
      return new Set(kept);
    },
    async failExhausted(now, maxAttempts, message) {
      const ended = [...rows.values()].filter((r) => free(r, now) && r.attempts >= maxAttempts);
      for (const r of ended) Object.assign(r, { status: "failed", error: message, claimedBy: null, leaseUntil: null });
      return ended.map((r) => r.id);
    },
    // This store stands for one shared by live processes (the owners here): no claim is a dead one's.
    async releaseDead(owner) {
      released.push(owner);
      return 0;
    },
    cancelled: async (id) => rows.get(id)?.status === "cancelled",
  };
  const add = (...ids: number[]) => {
    for (const id of ids) rows.set(id, { id, status: "pending", claimedBy: null, leaseUntil: null, attempts: 0, error: null });
  };
  return { rows, store, add, released };
}

type Memory = ReturnType<typeof memoryStore>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const aborted = (signal: AbortSignal) => new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));

/** What each owner's work saw, in order. */
const seen: string[] = [];
const queues: ClaimQueue[] = [];
let n = 0;

/** One owner of the queue kept in `m`, working rows with `work` (default: until its signal aborts, then it says why). */
function owner(m: Memory, work: (row: Row, job: ClaimContext) => Promise<void> = untilStopped(m), capacity = 2): ClaimQueue {
  const q = defineClaimQueue<Row>({
    name: `test-claims-${process.pid}-${++n}`,
    store: m.store,
    maxAttempts: 3,
    exhausted: "its processes stopped 3 times",
    work,
    failed: async () => undefined,
    announce: (id) => seen.push(`announce ${id}`),
    channels: { wake: "turnscope_test_claims_wake", cancel: "turnscope_test_claims_cancel" },
    capacity: () => capacity,
    idlePollMs: 50,
  });
  queues.push(q);
  return q;
}

/** Work that waits until its signal aborts, says why, and gives its row back when the process drains (as a generation does). */
const untilStopped = (m: Memory) => async (row: Row, job: ClaimContext) => {
  seen.push(`${job.owner} works ${row.id}`);
  await aborted(job.signal);
  seen.push(`${row.id} stopped: ${job.stopKind()} (${(job.signal.reason as Error).message})`);
  const mine = m.rows.get(row.id)!;
  if (job.stopKind() === "drain" && mine.claimedBy === job.owner) Object.assign(mine, { claimedBy: null, leaseUntil: null, attempts: mine.attempts - 1 });
};

beforeAll(() => {
  // A lease of a second: renewed every third of it.
  process.env.JOB_VISIBILITY_TIMEOUT_SECONDS = "1";
  resetConfig();
});

afterEach(async () => {
  await Promise.all(queues.splice(0).map((q) => q.drain(0)));
  seen.length = 0;
});

afterAll(() => {
  delete process.env.JOB_VISIBILITY_TIMEOUT_SECONDS;
  resetConfig();
});

describe("defineClaimQueue", () => {
  it("two owners never work one row: each row is worked once, each owner at most its capacity at a time", async () => {
    const m = memoryStore();
    m.add(1, 2, 3, 4, 5, 6, 7);
    const holders = new Map<number, string>();
    const clashes: string[] = [];
    const busy = new Map<string, number>();
    let most = 0;
    const work = async (row: Row, job: ClaimContext) => {
      if (holders.has(row.id)) clashes.push(`${row.id}: ${holders.get(row.id)} and ${job.owner}`);
      holders.set(row.id, job.owner);
      busy.set(job.owner, (busy.get(job.owner) ?? 0) + 1);
      most = Math.max(most, busy.get(job.owner)!);
      await sleep(30);
      busy.set(job.owner, busy.get(job.owner)! - 1);
      Object.assign(m.rows.get(row.id)!, { status: "done", claimedBy: null, leaseUntil: null });
    };
    const a = owner(m, work);
    const b = owner(m, work);
    await Promise.all([a.start(), b.start()]);
    await until("every row done", () => [...m.rows.values()].every((r) => r.status === "done"));
    expect(clashes).toEqual([]);
    expect(holders.size).toBe(7);
    expect(new Set(holders.values())).toEqual(new Set([a.owner(), b.owner()]));
    expect(most).toBeLessThanOrEqual(2);
    expect([...m.rows.values()].map((r) => r.attempts)).toEqual([1, 1, 1, 1, 1, 1, 1]);
  });

  it("a claim lost to another owner stops the work through its signal at the next renewal", async () => {
    const m = memoryStore();
    m.add(1);
    const a = owner(m);
    await a.start();
    await until("row 1 worked", () => a.worksHere(1));
    const stopped = a.finishedHere(1);
    // Its lease ran out (the process stalled) and another process claimed it.
    Object.assign(m.rows.get(1)!, { claimedBy: "another-host:1:x", leaseUntil: new Date(Date.now() + 60_000).toISOString() });
    await stopped;
    expect(seen).toContain("1 stopped: lost (its claim was lost)");
    expect(a.worksHere(1)).toBe(false);
    // Still the other owner's: the stopped work gave nothing back.
    expect(m.rows.get(1)).toMatchObject({ status: "processing", claimedBy: "another-host:1:x" });
  });

  it("a cancel from another owner (the row ended first) stops the work here; a cancel here stops it at once", async () => {
    const m = memoryStore();
    m.add(1, 2);
    const a = owner(m);
    const b = owner(m, untilStopped(m), 0);
    await Promise.all([a.start(), b.start()]);
    await until("both rows worked here", () => a.worksHere(1) && a.worksHere(2));
    // Another process cancels: the row first, then it tells every process (NOTIFY on PostgreSQL; on SQLite the renewal finds it).
    m.rows.get(1)!.status = "cancelled";
    await b.stopEverywhere(1);
    await until("row 1 stopped", () => !a.worksHere(1), 5_000);
    expect(seen).toContain("1 stopped: cancel (cancelled)");
    // A cancel in the process that works it resolves once its work stopped.
    m.rows.get(2)!.status = "cancelled";
    await a.stopEverywhere(2);
    expect(a.worksHere(2)).toBe(false);
    expect(seen.at(-1)).toBe("2 stopped: cancel (cancelled)");
  });

  it("drain lets work in flight finish for its grace, aborts the rest, claims nothing more; the rows given back go to another owner", async () => {
    const m = memoryStore();
    m.add(1, 2);
    const a = owner(m, async (row, job) => {
      if (row.id === 2) return untilStopped(m)(row, job);
      // Row 1 finishes what it has in flight once told the process drains.
      await until("draining", () => job.draining(), 5_000, { every: 5 });
      Object.assign(m.rows.get(1)!, { status: "done", claimedBy: null, leaseUntil: null });
      seen.push("1 finished while draining");
    });
    await a.start();
    await until("both rows worked", () => a.worksHere(1) && a.worksHere(2));
    expect(await a.drain(200)).toEqual({ finished: 1, aborted: 1 });
    expect(seen).toEqual(expect.arrayContaining(["1 finished while draining", "2 stopped: drain (shutting down)"]));
    expect(m.rows.get(1)).toMatchObject({ status: "done" });
    expect(m.rows.get(2)).toMatchObject({ status: "processing", claimedBy: null, attempts: 0 });
    // Drained, it claims nothing more, nor starts again.
    m.add(3);
    a.wake();
    await a.start();
    await sleep(120);
    expect(m.rows.get(3)).toMatchObject({ status: "pending", claimedBy: null });
    const b = owner(m);
    await b.start();
    await until("rows 2 and 3 taken up by the other owner", () => b.worksHere(2) && b.worksHere(3));
    expect(m.rows.get(2)).toMatchObject({ claimedBy: b.owner(), attempts: 1 });
  });

  it.skipIf(!dialect.queuesRuns)("a cancel heard while a claim is in flight stops the row that claim returns: it is never worked (shared store)", async () => {
    const m = memoryStore();
    m.add(1);
    // The claim takes row 1 at once but answers only when let go, as a claim whose query is slow to return.
    let letGo!: () => void;
    const held = new Promise<void>((r) => (letGo = r));
    const claim = m.store.claim;
    let first = true;
    m.store.claim = async (...args) => {
      const rows = await claim(...args);
      if (first && rows.length > 0) {
        first = false;
        await held;
      }
      return rows;
    };
    const a = owner(m);
    const b = owner(m, untilStopped(m), 0);
    await Promise.all([a.start(), b.start()]);
    await until("row 1 claimed", () => m.rows.get(1)!.claimedBy === a.owner());
    // Another process cancels it: the row first, then NOTIFY — heard by a, whose claim has not answered yet.
    m.rows.get(1)!.status = "cancelled";
    await b.stopEverywhere(1);
    await sleep(300);
    letGo();
    m.add(2);
    a.wake();
    await until("row 2 worked", () => a.worksHere(2));
    expect(seen).not.toContain(`${a.owner()} works 1`);
    expect(a.worksHere(1)).toBe(false);
  });

  it.skipIf(!dialect.queuesRuns)("claims by polling when its channels cannot be listened to, and keeps trying to listen (shared store)", async () => {
    const m = memoryStore();
    m.add(1, 2);
    // A notifier that refuses every subscription (closed): listening fails on every attempt.
    const url = `${process.env.DATABASE_URL}${process.env.DATABASE_URL!.includes("?") ? "&" : "?"}application_name=claims-closed-notifier`;
    await getNotifier(url).close();
    const q = defineClaimQueue<Row>({
      name: `test-claims-${process.pid}-${++n}`,
      store: m.store,
      maxAttempts: 3,
      exhausted: "its processes stopped 3 times",
      work: untilStopped(m),
      failed: async () => undefined,
      announce: () => undefined,
      channels: { wake: "turnscope_test_claims_wake", cancel: "turnscope_test_claims_cancel" },
      capacity: () => 2,
      idlePollMs: 50,
      shared: true,
      notifyUrl: () => url,
    });
    queues.push(q);
    await q.start();
    await until("both rows worked without a channel", () => q.worksHere(1) && q.worksHere(2));
  });

  it("claims as many rows at once as there is room for", async () => {
    const m = memoryStore();
    m.add(1, 2, 3, 4, 5);
    const limits: number[] = [];
    const claim = m.store.claim;
    m.store.claim = async (...args) => {
      limits.push(args[4]);
      return claim(...args);
    };
    const a = owner(m, untilStopped(m), 3);
    await a.start();
    await until("three rows worked", () => [1, 2, 3].every((id) => a.worksHere(id)));
    // One claim for the three free slots, not three claims of one.
    expect(limits[0]).toBe(3);
    expect(a.worksHere(4)).toBe(false);
  });

  it("reopened after a drain, a queue claims again, still counting work the drain could not stop against its capacity", async () => {
    const m = memoryStore();
    m.add(1);
    let letGo!: () => void;
    const deaf = new Promise<void>((r) => (letGo = r));
    const a = owner(m, async (row, job) => {
      if (row.id === 1) await deaf; // deaf to its signal
      else await untilStopped(m)(row, job);
    }, 2);
    await a.start();
    await until("row 1 worked", () => a.worksHere(1));
    expect(await a.drain(0)).toEqual({ finished: 0, aborted: 1 });
    a.reopen();
    m.add(2, 3);
    await a.start();
    await until("row 2 worked", () => a.worksHere(2));
    // Row 1 still runs: one slot is left, so row 3 waits.
    await sleep(150);
    expect(a.worksHere(3)).toBe(false);
    letGo();
    await until("row 3 worked once row 1 ended", () => a.worksHere(3));
  });

  it("a row whose claims ran out as many times as allowed is failed saying so, never claimed again", async () => {
    const m = memoryStore();
    m.add(1, 2);
    Object.assign(m.rows.get(1)!, { status: "processing", claimedBy: "dead-host:1:x", leaseUntil: new Date(Date.now() - 1_000).toISOString(), attempts: 3 });
    const a = owner(m);
    await a.start();
    await until("row 1 failed and row 2 worked", () => m.rows.get(1)!.status === "failed" && a.worksHere(2));
    expect(m.rows.get(1)).toMatchObject({ error: "its processes stopped 3 times", claimedBy: null, attempts: 3 });
    expect(seen).toContain("announce 1");
    expect(seen).not.toContain(`${a.owner()} works 1`);
    // A single-process store (SQLite) frees the claims a stopped server left at start-up; a shared one leaves them to their leases.
    expect(m.released).toEqual(dialect.queuesRuns ? [] : [a.owner()]);
  });
});
