/**
 * Periodic passes (lib/jobs/periodic.ts), on real timers: never two passes at once, a failed pass logged and
 * the next one tried, stop() waiting for the pass in progress (which sees stopping()), nothing after it.
 */
import { describe, expect, it } from "vitest";
import { until } from "@/lib/testing/setup/until";
import { definePeriodic } from "./periodic";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let n = 0;

describe("definePeriodic", () => {
  it("never overlaps a slow pass, tries again after a failure, and stop() waits for the pass in progress", async () => {
    let passes = 0;
    let running = 0;
    let most = 0;
    let sawStopping = false;
    const periodic = definePeriodic(`test.periodic.${process.pid}.${++n}`, {
      everyMs: () => 10,
      firstAfterMs: 0,
      failed: "test pass failed",
      pass: async () => {
        passes++;
        running++;
        most = Math.max(most, running);
        try {
          if (passes === 1) throw new Error("the first pass fails");
          // Slow: many ticks fall while it runs.
          for (let i = 0; i < 8; i++) {
            if (periodic.stopping()) return void (sawStopping = true);
            await sleep(10);
          }
        } finally {
          running--;
        }
      },
    });
    periodic.start();
    periodic.start(); // idempotent: one timer
    await until("a pass after the failed one", () => passes >= 2, 5_000, { every: 5 });
    await until("a slow pass under way", () => running === 1, 5_000, { every: 1 });
    await periodic.stop();
    expect(most).toBe(1);
    expect(running).toBe(0);
    expect(sawStopping).toBe(true);
    const after = passes;
    await sleep(60);
    expect(passes).toBe(after);
  });

  it("leaves an interval of 0 off", async () => {
    let passes = 0;
    const periodic = definePeriodic(`test.periodic.${process.pid}.${++n}`, { everyMs: () => 0, firstAfterMs: 0, failed: "x", pass: async () => void passes++ });
    periodic.start();
    await sleep(30);
    expect(passes).toBe(0);
  });
});
