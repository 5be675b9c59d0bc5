import { describe, expect, it } from "vitest";
import { aggregate, Aggregator, scoreRange, type ScoredResult } from "./aggregate";

const ok = (...scores: Array<number | null>): ScoredResult[] => scores.map((score) => ({ status: "completed", score }));
const failed = (n: number): ScoredResult[] => Array.from({ length: n }, () => ({ status: "failed", score: null }));
const zeroProgress = { "0.0-0.2": 0, "0.2-0.4": 0, "0.4-0.6": 0, "0.6-0.8": 0, "0.8-1.0": 0 };

describe("aggregate: progress", () => {
  it("computes mean, min, max and the population std dev of a known set", () => {
    // mean 0.5; squared deviations 0.09, 0.01, 0.01, 0.09 → variance 0.05 (population, /n not /n-1).
    const a = aggregate("progress", ok(0.2, 0.4, 0.6, 0.8));
    expect(a.total).toBe(4);
    expect(a.average_score).toBeCloseTo(0.5, 12);
    expect(a.min_score).toBe(0.2);
    expect(a.max_score).toBe(0.8);
    expect(a.std_dev).toBeCloseTo(Math.sqrt(0.05), 12);
    expect(a.distribution).toEqual({ "0.0-0.2": 0, "0.2-0.4": 1, "0.4-0.6": 1, "0.6-0.8": 1, "0.8-1.0": 1 });
  });

  it("puts each edge in the bin that starts there, and 1.0 in the last bin", () => {
    const a = aggregate("progress", ok(0, 0.2, 0.4, 0.6, 0.8, 1.0, 0.19999, 0.99));
    expect(a.distribution).toEqual({ "0.0-0.2": 2, "0.2-0.4": 1, "0.4-0.6": 1, "0.6-0.8": 1, "0.8-1.0": 3 });
  });

  it("bins computed floats by their exact value, not by floor(x*5)", () => {
    expect(0.1 * 3).toBe(0.30000000000000004);
    expect(0.2 * 3).toBe(0.6000000000000001);
    const below = 0.6 - Number.EPSILON; // 0.5999999999999999
    const a = aggregate("progress", ok(0.1 * 3, 0.2 * 3, below, 0.1 + 0.7));
    // 0.1 + 0.7 is 0.7999999999999999: still below the 0.8 edge.
    expect(a.distribution).toEqual({ "0.0-0.2": 0, "0.2-0.4": 1, "0.4-0.6": 1, "0.6-0.8": 2, "0.8-1.0": 0 });
  });

  it("ignores failed results and completed results without a score", () => {
    const a = aggregate("progress", [...ok(1, null), ...failed(3)]);
    expect(a).toEqual({
      total: 1,
      average_score: 1,
      min_score: 1,
      max_score: 1,
      std_dev: 0,
      distribution: { ...zeroProgress, "0.8-1.0": 1 },
    });
  });

  it("gives total 0, null numbers and every bin at 0 when empty", () => {
    expect(aggregate("progress", [])).toEqual({
      total: 0,
      average_score: null,
      min_score: null,
      max_score: null,
      std_dev: null,
      distribution: zeroProgress,
    });
    expect(aggregate("progress", failed(2)).total).toBe(0);
  });
});

describe("aggregate: checkbox", () => {
  it("counts 1 as true and 0 as false; the average is the share of true", () => {
    // mean 0.75; deviations 0.25²×3 + 0.75² = 0.75 → variance 0.1875.
    const a = aggregate("checkbox", [...ok(1, 1, 0, 1), ...failed(1)]);
    expect(a.total).toBe(4);
    expect(a.average_score).toBe(0.75);
    expect(a.min_score).toBe(0);
    expect(a.max_score).toBe(1);
    expect(a.std_dev).toBeCloseTo(Math.sqrt(0.1875), 12);
    expect(a.distribution).toEqual({ true: 3, false: 1 });
  });

  it("keeps both keys when empty", () => {
    expect(aggregate("checkbox", []).distribution).toEqual({ true: 0, false: 0 });
  });
});

describe("aggregate: number", () => {
  it("uses five equal-width bins between min and max, the last closed", () => {
    // 2,4,4,4,5,5,7,9: the textbook set with mean 5 and population std dev exactly 2.
    const a = aggregate("number", ok(2, 4, 4, 4, 5, 5, 7, 9));
    expect(a.total).toBe(8);
    expect(a.average_score).toBe(5);
    expect(a.std_dev).toBe(2);
    expect(a.min_score).toBe(2);
    expect(a.max_score).toBe(9);
    // width 1.4: edges 2, 3.4, 4.8, 6.2, 7.6, 9.
    expect(a.distribution).toEqual({ "2-3.4": 1, "3.4-4.8": 3, "4.8-6.2": 2, "6.2-7.6": 1, "7.6-9": 1 });
  });

  it("labels readable edges even when the arithmetic is not exact", () => {
    const a = aggregate("number", ok(1, 2));
    expect(Object.keys(a.distribution)).toEqual(["1-1.2", "1.2-1.4", "1.4-1.6", "1.6-1.8", "1.8-2"]);
    expect(a.distribution["1-1.2"]).toBe(1);
    expect(a.distribution["1.8-2"]).toBe(1);
  });

  it("handles negative numbers", () => {
    // mean -1; deviations 16, 1, 1, 16 → variance 8.5.
    const a = aggregate("number", ok(-5, -2, 0, 3));
    expect(a.average_score).toBe(-1);
    expect(a.min_score).toBe(-5);
    expect(a.max_score).toBe(3);
    expect(a.std_dev).toBeCloseTo(Math.sqrt(8.5), 12);
    // width 1.6: edges -5, -3.4, -1.8, -0.2, 1.4, 3.
    expect(a.distribution).toEqual({ "-5--3.4": 1, "-3.4--1.8": 1, "-1.8--0.2": 0, "-0.2-1.4": 1, "1.4-3": 1 });
  });

  it("puts a single value (or all equal values) in one bin a-a", () => {
    expect(aggregate("number", ok(7))).toEqual({
      total: 1,
      average_score: 7,
      min_score: 7,
      max_score: 7,
      std_dev: 0,
      distribution: { "7-7": 1 },
    });
    expect(aggregate("number", ok(2.5, 2.5, 2.5)).distribution).toEqual({ "2.5-2.5": 3 });
  });

  it("keeps labels distinct for a very narrow range", () => {
    const a = aggregate("number", ok(1, 1 + 1e-9));
    expect(Object.keys(a.distribution)).toHaveLength(5);
    expect(Object.values(a.distribution).reduce((s, n) => s + n, 0)).toBe(2);
  });

  it("has no bins when empty", () => {
    expect(aggregate("number", failed(1))).toEqual({
      total: 0,
      average_score: null,
      min_score: null,
      max_score: null,
      std_dev: null,
      distribution: {},
    });
  });
});

describe("aggregate: text and json", () => {
  it("text: empty distribution, null scores, total = completed results", () => {
    expect(aggregate("text", [...ok(null, null, 0.5), ...failed(2)])).toEqual({
      total: 3,
      average_score: null,
      min_score: null,
      max_score: null,
      std_dev: null,
      distribution: {},
    });
  });

  it("json: bins like progress when every score is within [0, 1]; no score → excluded", () => {
    const a = aggregate("json", ok(0.1, 0.9, null, 1));
    expect(a.total).toBe(3);
    expect(a.distribution).toEqual({ ...zeroProgress, "0.0-0.2": 1, "0.8-1.0": 2 });
  });

  it("json: bins like a number otherwise", () => {
    const a = aggregate("json", ok(0, 10, 5));
    expect(a.total).toBe(3);
    expect(a.average_score).toBe(5);
    expect(a.distribution).toEqual({ "0-2": 1, "2-4": 0, "4-6": 1, "6-8": 0, "8-10": 1 });
  });

  it("json: empty gives the progress bins at 0", () => {
    expect(aggregate("json", ok(null)).distribution).toEqual(zeroProgress);
  });
});

describe("Aggregator", () => {
  it("gives the same answer fed one score at a time after a range pass", () => {
    const results = ok(3, 1, 4, 1, 5, 9, 2, 6);
    const agg = new Aggregator("number", scoreRange(results));
    for (const r of results) agg.add(r.score as number);
    expect(agg.result()).toEqual(aggregate("number", results));
  });

  it("stays accurate for large offsets (no catastrophic cancellation)", () => {
    const a = aggregate("number", ok(1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16));
    // Deviations from the mean 1e9+10: 36, 9, 9, 36 → variance 22.5.
    expect(a.std_dev).toBeCloseTo(Math.sqrt(22.5), 6);
  });
});
