import { describe, expect, it } from "vitest";
import { forEachLimited } from "./limited";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe("forEachLimited", () => {
  it("runs every item, never more than the limit at once", async () => {
    let running = 0;
    let peak = 0;
    const done: number[] = [];
    await forEachLimited([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      running++;
      peak = Math.max(peak, running);
      await sleep(5 + (n % 3) * 5);
      done.push(n);
      running--;
    });
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(peak).toBe(3);
  });

  it("after a failure starts nothing more, waits for the items in flight, then throws the first error", async () => {
    const started: number[] = [];
    const finished: number[] = [];
    let settledAt = 0;
    const run = forEachLimited([1, 2, 3, 4, 5, 6], 2, async (n) => {
      started.push(n);
      if (n === 1) throw new Error("cell 1: database went away");
      await sleep(50);
      if (n === 2) throw new Error("cell 2: a later error");
      finished.push(n);
    }).finally(() => (settledAt = Date.now()));
    const t0 = Date.now();
    await expect(run).rejects.toThrow("cell 1: database went away");
    // Item 2 was in flight when item 1 failed: the call waited for it (50 ms) before throwing.
    expect(settledAt - t0).toBeGreaterThanOrEqual(40);
    // Item 3 took item 1's place before the failure was seen (same turn); nothing after it started.
    expect(started.every((n) => n <= 3)).toBe(true);
    expect(started).toContain(2);
    await sleep(100);
    expect(started.every((n) => n <= 3)).toBe(true);
  });
});
