import { describe, expect, it } from "vitest";
import { mcnemarExact, pairedBootstrap } from "./regression";

describe("McNemar's exact test", () => {
  it("matches the binomial tail worked by hand", () => {
    // 8 discordant pairs, 7 worse and 1 better: p = 2 × (C(8,0) + C(8,1)) / 2^8 = 2 × 9 / 256 = 0.0703125.
    expect(mcnemarExact(7, 1)).toBeCloseTo(0.0703125, 12);
    // 10 vs 0: 2 / 1024.
    expect(mcnemarExact(10, 0)).toBeCloseTo(2 / 1024, 12);
    expect(mcnemarExact(3, 3)).toBe(1);
    expect(mcnemarExact(0, 0)).toBe(1);
    // Symmetric in its arguments.
    expect(mcnemarExact(1, 7)).toBe(mcnemarExact(7, 1));
  });
});

describe("paired bootstrap", () => {
  it("is centred on the mean delta, seeded, and excludes zero for a consistent drop", () => {
    const drop = Array.from({ length: 40 }, (_, i) => -0.2 - (i % 5) * 0.01);
    const a = pairedBootstrap(drop, { seed: 7 })!;
    expect(a.mean).toBeCloseTo(-0.22, 9);
    expect(a.interval[1]).toBeLessThan(0);
    expect(pairedBootstrap(drop, { seed: 7 })).toEqual(a);
    const noise = Array.from({ length: 40 }, (_, i) => (i % 2 ? 0.1 : -0.1));
    const b = pairedBootstrap(noise)!;
    expect(b.interval[0]).toBeLessThan(0);
    expect(b.interval[1]).toBeGreaterThan(0);
    expect(pairedBootstrap([])).toBeNull();
  });
});
