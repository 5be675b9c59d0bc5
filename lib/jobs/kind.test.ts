/** A job kind's cancel and drain (lib/jobs/kind.ts), on a store of its own kept in memory. */
import { describe, expect, it } from "vitest";
import { defineJobKind, type JobContext, type JobStore } from "./kind";

/** Rows by id: "active" until ended; `log` says what happened, in order. */
function memoryStore() {
  const rows = new Map<number, string>();
  const log: string[] = [];
  const store: JobStore = {
    renew: async (id) => rows.get(id) === "active",
    failExpired: async () => [],
    failUnfinished: async () => 0,
    async cancel(id, message) {
      log.push(`store cancel ${id}`);
      if (rows.get(id) !== "active") return false;
      rows.set(id, message);
      return true;
    },
  };
  return { rows, log, store };
}

/** Work that waits until its signal aborts, then ends its own row as `ends` says (or leaves it, when null). */
const untilAborted = (m: ReturnType<typeof memoryStore>, ends: ((reason: string) => string) | null) => async (job: JobContext) => {
  await new Promise<void>((resolve) => job.signal.addEventListener("abort", () => resolve(), { once: true }));
  const reason = (job.signal.reason as Error).message;
  m.log.push(`aborted ${job.id}: ${reason}`);
  if (ends && m.rows.get(job.id) === "active") m.rows.set(job.id, ends(reason));
};

describe("defineJobKind", () => {
  it("a kind whose work ends its own row on cancel is aborted first and keeps what its work wrote; others have the row ended first", async () => {
    const own = memoryStore();
    const runs = defineJobKind({ name: `test-run-${Date.now()}`, store: own.store, expired: "lost", interrupted: "stopped", endsOnCancel: true });
    own.rows.set(1, "active");
    runs.start(1, untilAborted(own, (reason) => `${reason} by the work, with its totals`), async () => undefined);
    await new Promise((r) => setImmediate(r));
    expect(await runs.cancel(1)).toBe(true);
    expect(own.log).toEqual(["aborted 1: cancelled", "store cancel 1"]);
    expect(own.rows.get(1)).toBe("cancelled by the work, with its totals");
    expect(runs.worksHere(1)).toBe(false);

    const plain = memoryStore();
    const comparisons = defineJobKind({ name: `test-comparison-${Date.now()}`, store: plain.store, expired: "lost", interrupted: "stopped" });
    plain.rows.set(2, "active");
    comparisons.start(2, untilAborted(plain, (reason) => `${reason} by the work`), async () => undefined);
    await new Promise((r) => setImmediate(r));
    expect(await comparisons.cancel(2)).toBe(true);
    expect(plain.log).toEqual(["store cancel 2", "aborted 2: cancelled"]);
    expect(plain.rows.get(2)).toBe("cancelled");
  });

  it("drain gives the kind's jobs the grace period, then aborts those still working with the reason; other kinds' jobs go on", async () => {
    const m = memoryStore();
    const kind = defineJobKind({ name: `test-drain-${Date.now()}`, store: m.store, expired: "lost", interrupted: "stopped" });
    const other = defineJobKind({ name: `test-other-${Date.now()}`, store: m.store, expired: "lost", interrupted: "stopped" });
    for (const id of [1, 2, 3]) m.rows.set(id, "active");
    kind.start(1, () => new Promise((r) => setTimeout(r, 20)), async () => undefined);
    kind.start(2, untilAborted(m, null), async () => undefined);
    other.start(3, untilAborted(m, null), async () => undefined);
    await new Promise((r) => setImmediate(r));
    expect(await kind.drain(300, "shutting down")).toEqual({ finished: 1, aborted: 1 });
    expect(m.log).toEqual(["aborted 2: shutting down"]);
    expect([kind.worksHere(1), kind.worksHere(2), other.worksHere(3)]).toEqual([false, false, true]);
    await other.cancel(3);
    await other.waitFor(3);
  });
});
