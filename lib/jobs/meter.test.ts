/** The budget meter every job kind asks (lib/jobs/meter.ts): may a call start, what landed, what is in flight. */
import { describe, expect, it } from "vitest";
import { LocalBudgetMeter, SharedBudgetMeter } from "./meter";

describe("LocalBudgetMeter", () => {
  it("lets calls start until what landed reaches the limit, then none, for good; counts the calls in flight", () => {
    const meter = new LocalBudgetMeter(1, 0.25);
    expect([meter.mayStart(), meter.mayStart()]).toEqual([true, true]);
    expect(meter.inFlight).toBe(2);
    meter.landed(0.5);
    meter.settle();
    expect(meter.mayStart()).toBe(true);
    meter.landed(0.3);
    expect([meter.reached, meter.mayStart(), meter.spentUsd]).toEqual([true, false, 1.05]);
    meter.settle();
    meter.settle();
    expect(meter.inFlight).toBe(0);
  });

  it("an unpriced call makes the spend unknown, which never reaches a limit; no limit lets every call start", () => {
    const unknown = new LocalBudgetMeter(0.01);
    unknown.landed(null);
    unknown.landed(5);
    expect([unknown.spentUsd, unknown.reached, unknown.mayStart()]).toEqual([null, false, true]);
    const unlimited = new LocalBudgetMeter();
    unlimited.landed(1e6);
    expect(unlimited.mayStart()).toBe(true);
    // An earlier attempt that already spent the limit: nothing starts.
    expect(new LocalBudgetMeter(1, 1).mayStart()).toBe(false);
  });
});

describe("SharedBudgetMeter", () => {
  it("reads what every process saved, plus what landed here and is not saved yet", async () => {
    let saved = 0.5;
    const meter = new SharedBudgetMeter(1, async () => saved);
    expect(await meter.mayStart()).toBe(true);
    meter.landed(0.3);
    expect(await meter.mayStart()).toBe(true);
    // Saved: now counted in the store's figure, not twice.
    saved += 0.3;
    meter.saved(0.3);
    expect(await meter.mayStart()).toBe(true);
    meter.landed(0.25);
    expect([await meter.mayStart(), meter.reached]).toEqual([false, true]);
    saved = 0;
    expect(await meter.mayStart()).toBe(false);
  });

  it("stops on what landed here for this meter only (stoppedShort); a save reads the saved spend alone; the limit saved ends it for good, told once", async () => {
    let saved = 0;
    let told = 0;
    // Two parts of one job in this process share what landed and waits for its save.
    let pooled = 0;
    const pool = { add: (n: number) => void (pooled += n), remove: (n: number) => void (pooled -= n), total: () => pooled };
    const opts = { pool, onReached: async () => void told++ };
    const a = new SharedBudgetMeter(1, async () => saved, opts);
    const b = new SharedBudgetMeter(1, async () => saved, opts);
    expect(await a.mayStart()).toBe(true);
    a.landed(0.7);
    a.landed(0.4);
    // b has landed nothing itself, but a's replies wait here: b starts no call, short of the limit.
    expect([await b.mayStart(), b.reached, b.stoppedShort]).toEqual([false, true, true]);
    // A save reads only what is saved: a's replies may still be saved.
    expect(await b.underLimit()).toBe(true);
    // A reply counted early is taken back in part (a negative cost), then the rest saved.
    a.landed(-0.4);
    saved = 0.7;
    a.saved(0.7);
    expect(pooled).toBeCloseTo(0, 9);
    expect(await a.mayStart()).toBe(true);
    saved = 1;
    expect([await a.underLimit(), await a.underLimit(), a.reached, a.stoppedShort, told]).toEqual([false, false, true, false, 1]);
    expect(await a.mayStart()).toBe(false);
  });
});
