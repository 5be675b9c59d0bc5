import { describe, expect, it } from "vitest";
import { idealRatio, modelRunMs } from "./retry-tail-model";

describe("the ideal client's run under random 429s (the served bench's bound)", () => {
  it("without refusals, a run takes its batches one after another", () => {
    expect(modelRunMs({ cells: 1000, slots: 32, latencyMs: 100, refuseShare: 0, retryAfterMs: 1000, seed: 1 })).toBe(Math.ceil(1000 / 32) * 100);
  });

  it("refusals answered at once cost only the refused calls' own time", () => {
    const ratio = idealRatio({ cells: 20_000, slots: 32, latencyMs: 100, refuseShare: 0.2, retryAfterMs: 0 }, 5);
    expect(ratio.mean).toBeGreaterThan(0.78);
    expect(ratio.mean).toBeLessThan(0.82);
  });

  it("a 1 s Retry-After on a short run: the longest chain of refusals is most of the run", () => {
    const short = idealRatio({ cells: 1000, slots: 32, latencyMs: 100, refuseShare: 0.2, retryAfterMs: 1000 }, 50);
    const long = idealRatio({ cells: 5000, slots: 32, latencyMs: 100, refuseShare: 0.2, retryAfterMs: 1000 }, 20);
    expect(short.mean).toBeLessThan(0.55);
    expect(long.mean).toBeGreaterThan(0.6);
    expect(short.p10).toBeLessThanOrEqual(short.mean);
    expect(short.p90).toBeGreaterThanOrEqual(short.mean);
  });
});
