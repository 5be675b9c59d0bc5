/**
 * Agreement figures against values worked by hand. Each fixture's arithmetic is written out in its
 * test, so a reader can check the expected numbers without trusting the code under test.
 */
import { describe, expect, it } from "vitest";
import {
  atScorePrecision,
  averageRanks,
  cohensKappa,
  computeAgreement,
  meanAbsoluteError,
  rankingAgreement,
  spearman,
  weightedKappa,
  wilsonInterval,
  type PairedItem,
  type Reading,
} from "./index";

const Z = 1.959963984540054;

function items(pairs: Array<[Reading, Reading]>): PairedItem[] {
  return pairs.map(([a, b], i) => ({ entity_type: "conversation", entity_id: i + 1, conversation_id: i + 1, a, b }));
}

function repeat<T>(value: T, times: number): T[] {
  return Array.from({ length: times }, () => value);
}

// 10 pass/fail pairs (a = judge, b = truth): 4 pass/pass, 1 pass/fail, 2 fail/pass, 3 fail/fail.
const binaryPairs: Array<[boolean, boolean]> = [
  ...repeat<[boolean, boolean]>([true, true], 4),
  [true, false],
  ...repeat<[boolean, boolean]>([false, true], 2),
  ...repeat<[boolean, boolean]>([false, false], 3),
];

describe("Cohen's kappa", () => {
  it("matches the hand computation on a 2×2 table, with its standard-error interval", () => {
    // po = 7/10 = 0.7. Marginals: a pass 5/10, b pass 6/10 → pe = 0.5·0.6 + 0.5·0.4 = 0.5.
    // kappa = (0.7 − 0.5) / (1 − 0.5) = 0.4. se = sqrt(0.7·0.3 / (10·0.5²)) = sqrt(0.084) = 0.28982753…
    // 95%: 0.4 ± 1.95996·0.28983 = [−0.16805153, 0.96805153].
    const k = cohensKappa(binaryPairs.map(([a, b]) => [String(a), String(b)] as const));
    expect(k).not.toBeNull();
    expect(k!.po).toBeCloseTo(0.7, 12);
    expect(k!.pe).toBeCloseTo(0.5, 12);
    expect(k!.kappa).toBeCloseTo(0.4, 12);
    expect(k!.se).toBeCloseTo(Math.sqrt(0.084), 12);
    expect(k!.interval[0]).toBeCloseTo(-0.1680515301786507, 10);
    expect(k!.interval[1]).toBeCloseTo(0.9680515301786508, 10);
  });

  it("handles three categories", () => {
    // (x,x)×3 (y,y)×2 (z,z)×1 (x,y)×1 (y,z)×1 (z,x)×2: po = 6/10.
    // a: x 4, y 3, z 3; b: x 5, y 3, z 2 → pe = .4·.5 + .3·.3 + .3·.2 = 0.35; kappa = 0.25/0.65 = 0.384615…
    const pairs = [
      ...repeat(["x", "x"] as const, 3),
      ...repeat(["y", "y"] as const, 2),
      ["z", "z"] as const,
      ["x", "y"] as const,
      ["y", "z"] as const,
      ...repeat(["z", "x"] as const, 2),
    ];
    const k = cohensKappa(pairs);
    expect(k!.pe).toBeCloseTo(0.35, 12);
    expect(k!.kappa).toBeCloseTo(0.25 / 0.65, 12);
  });

  it("is undefined (null) when both raters used one category throughout, and 1 for perfect agreement", () => {
    expect(cohensKappa(repeat(["a", "a"] as const, 5))).toBeNull();
    expect(cohensKappa([])).toBeNull();
    const perfect = cohensKappa([["a", "a"], ["b", "b"], ["a", "a"]]);
    expect(perfect!.kappa).toBe(1);
    expect(perfect!.interval).toEqual([1, 1]);
  });
});

describe("Wilson interval", () => {
  it("matches the published interval for 7 of 10", () => {
    // p = .7, z² = 3.8414588; centre = .7 + z²/20 = .89207; spread = z·sqrt(.021 + z²/400) = .34287;
    // denominator 1 + z²/10 = 1.38415 → [.39677, .89222].
    const [lo, hi] = wilsonInterval(7, 10)!;
    expect(lo).toBeCloseTo(0.396774, 5);
    expect(hi).toBeCloseTo(0.892208, 5);
  });

  it("stays inside [0, 1] at the edges and is null without observations", () => {
    const [lo, hi] = wilsonInterval(10, 10)!;
    expect(hi).toBe(1);
    expect(lo).toBeCloseTo(10 / (10 + Z * Z), 10); // at p = 1 the lower bound is n / (n + z²)
    expect(wilsonInterval(0, 0)).toBeNull();
  });
});

describe("Spearman with ties", () => {
  const xs = [1, 2, 2, 3, 4];
  const ys = [2, 1, 3, 3, 5];

  it("averages the ranks of ties", () => {
    expect(averageRanks(xs)).toEqual([1, 2.5, 2.5, 4, 5]);
    expect(averageRanks(ys)).toEqual([2, 1, 3.5, 3.5, 5]);
  });

  it("is the Pearson correlation of those ranks, with a Fisher-z interval", () => {
    // Rank deviations from the mean 3: dx = [−2, −.5, −.5, 1, 2], dy = [−1, −2, .5, .5, 2].
    // Σdxdy = 2 + 1 − .25 + .5 + 4 = 7.25; Σdx² = Σdy² = 9.5 → rho = 7.25 / 9.5 = 0.7631578947.
    // atanh(rho) = 1.0037340; half-width z/sqrt(5 − 3) = 1.3859038 → tanh(−0.38217) … tanh(2.38964).
    const r = spearman(xs, ys)!;
    expect(r.rho).toBeCloseTo(7.25 / 9.5, 12);
    expect(r.interval![0]).toBeCloseTo(-0.36459033394237034, 10);
    expect(r.interval![1]).toBeCloseTo(0.983335848633922, 10);
  });

  it("has no interval below four pairs and no value for a constant side", () => {
    expect(spearman([1, 2, 3], [1, 3, 2])!.interval).toBeNull();
    expect(spearman([1, 1, 1, 1], [1, 2, 3, 4])).toBeNull();
  });
});

describe("mean absolute error", () => {
  it("matches the hand computation, with a normal interval", () => {
    // |errors| = [1, 1, 1, 0, 1] → mae 0.8; sample variance (4·0.04 + 0.64)/4 = 0.2; s/√n = sqrt(0.2/5) = 0.2.
    const m = meanAbsoluteError([1, 2, 2, 3, 4], [2, 1, 3, 3, 5])!;
    expect(m.mae).toBeCloseTo(0.8, 12);
    expect(m.interval![0]).toBeCloseTo(0.8 - Z * 0.2, 12);
    expect(m.interval![1]).toBeCloseTo(0.8 + Z * 0.2, 12);
  });
});

describe("computeAgreement", () => {
  it("gives pass/fail figures and a confusion matrix whose off-diagonal cells list the entities", () => {
    const figures = computeAgreement("binary", items(binaryPairs));
    expect(figures.n).toBe(10);
    expect(figures.accuracy).toBeCloseTo(0.7, 12);
    expect(figures.kappa).toBeCloseTo(0.4, 12);
    expect(figures.spearman).toBeNull();
    expect(figures.mae).toBeNull();
    expect(figures.confusion!.labels).toEqual(["pass", "fail"]);
    expect(figures.confusion!.counts).toEqual([
      [4, 1],
      [2, 3],
    ]);
    expect(figures.confusion!.false_pass.map((e) => e.entity_id)).toEqual([5]);
    expect(figures.confusion!.false_fail.map((e) => e.entity_id)).toEqual([6, 7]);
    expect(figures.disagreements.map((d) => [d.entity_id, d.a, d.b])).toEqual([
      [5, true, false],
      [6, false, true],
      [7, false, true],
    ]);
    expect(figures.intervals.accuracy![0]).toBeCloseTo(0.396774, 5);
    expect(figures.intervals.kappa![1]).toBeCloseTo(0.9680515301786508, 10);
  });

  it("gives Spearman and MAE for scores, and pass/fail figures with a threshold", () => {
    const scores = items([
      [0.9, 1],
      [0.8, 0],
      [0.2, 0],
      [0.4, 1],
      [0.6, 1],
    ]);
    const plain = computeAgreement("score", scores);
    expect(plain.confusion).toBeNull();
    expect(plain.kappa).toBeNull();
    expect(plain.accuracy).toBe(0); // no score equals its reference exactly
    // |errors| = .1, .8, .2, .6, .4 → mae = 2.1/5 = 0.42; largest disagreement first.
    expect(plain.mae).toBeCloseTo(0.42, 12);
    expect(plain.disagreements.map((d) => d.entity_id)).toEqual([2, 4, 5, 3, 1]);
    // Ranks of a: .9→5 .8→4 .2→1 .4→2 .6→3; of b (ties 0,0 → 1.5; 1,1,1 → 4): [4, 1.5, 1.5, 4, 4].
    // dx = [2, 1, −2, −1, 0], dy = [1, −1.5, −1.5, 1, 1]: Σdxdy = 2 − 1.5 + 3 − 1 + 0 = 2.5,
    // Σdx² = 10, Σdy² = 1 + 2.25 + 2.25 + 1 + 1 = 7.5 → rho = 2.5 / sqrt(75) = 0.288675…
    expect(plain.spearman).toBeCloseTo(2.5 / Math.sqrt(75), 12);

    const cut = computeAgreement("score", scores, { threshold: 0.5 });
    // a pass: 1, 2, 5; b pass: 1, 4, 5 → pass/pass 1,5; pass/fail 2; fail/pass 4; fail/fail 3.
    expect(cut.confusion!.counts).toEqual([
      [2, 1],
      [1, 1],
    ]);
    expect(cut.accuracy).toBeCloseTo(0.6, 12);
    expect(cut.confusion!.false_pass.map((e) => e.entity_id)).toEqual([2]);
    expect(cut.confusion!.false_fail.map((e) => e.entity_id)).toEqual([4]);
  });

  it("compares text verdicts as categories", () => {
    const figures = computeAgreement("category", items([
      ["refund", "refund"],
      ["refund", "billing"],
      ["billing", "billing"],
    ]));
    expect(figures.confusion!.labels).toEqual(["billing", "refund"]);
    expect(figures.confusion!.counts).toEqual([
      [1, 0],
      [1, 1],
    ]);
    expect(figures.confusion!.false_pass).toEqual([]);
    expect(figures.accuracy).toBeCloseTo(2 / 3, 12);
  });

  it("is empty but well-formed without pairs", () => {
    const figures = computeAgreement("binary", []);
    expect(figures).toMatchObject({ n: 0, accuracy: null, kappa: null, intervals: { accuracy: null, kappa: null } });
  });
});

describe("weighted kappa (quadratic) by hand", () => {
  it("is 0 when agreement is what the marginals give by chance", () => {
    // levels 0, 1; O = ¼ in each cell; rows ½ ½, cols ½ ½ → Σw·O = ½ = Σw·E → κw = 0.
    expect(weightedKappa([[0, 0], [1, 1], [0, 1], [1, 0]])?.kappa).toBeCloseTo(0, 12);
  });

  it("costs a near miss little: one 1 read as 0.5 among four → 0.8", () => {
    // levels 0, 0.5, 1 (range 1); O: (0,0) (.5,.5) (1,1) (1,.5) each ¼; rows ¼ ¼ ½; cols ¼ ½ ¼.
    // Σw·O = 0.25²·… = (0.5)²·¼ = 0.0625; Σw·E = 0.09375 + 0.03125 + 0.1875 = 0.3125 → 1 − 0.2 = 0.8.
    expect(weightedKappa([[0, 0], [0.5, 0.5], [1, 1], [1, 0.5]])?.kappa).toBeCloseTo(0.8, 12);
    expect(weightedKappa([[0.3, 0.3]])).toBeNull();
  });

  it("a score metric reports it, and agreement within the tolerance", () => {
    const items = [0.8, 0.5, 0.2].map((a, i) => ({ entity_type: "message" as const, entity_id: i + 1, conversation_id: 1, a, b: [0.75, 0.5, 0.6][i] }));
    const figures = computeAgreement("score", items, { tolerance: 0.05 });
    // |0.05| agrees at 0.05 (floating point 0.8 − 0.75 = 0.05000000000000004), 0 agrees, 0.4 does not → 2/3.
    expect(figures.accuracy).toBeCloseTo(2 / 3, 12);
    expect(figures.tolerance).toBe(0.05);
    expect(figures.disagreements.map((d) => d.entity_id)).toEqual([3]);
    expect(figures.weighted_kappa).not.toBeNull();
  });
});

describe("ranking agreement among siblings by hand", () => {
  it("pairwise accuracy counts judge ties half; mean Spearman over groups with a defined rho", () => {
    const groups = [
      // judge .9 .5 .7 for ranks 0 1 2: (0,1) ✓, (0,2) ✓, (1,2) ✗ (.5 < .7).
      { key: "a", items: [0.9, 0.5, 0.7].map((judge, rank) => ({ judge, rank, ref: `a${rank}` })) },
      // a tie: half a pair; rho undefined (the judge is constant).
      { key: "b", items: [0.4, 0.4].map((judge, rank) => ({ judge, rank, ref: `b${rank}` })) },
      // a single reply: not a group.
      { key: "c", items: [{ judge: 1, rank: 0, ref: "c0" }] },
    ];
    const r = rankingAgreement(groups);
    expect(r).toMatchObject({ groups: 2, pairs: 4, pairwise_accuracy: 2.5 / 4, ties: 1, spearman_undefined: 1 });
    // Group a: judge ranks 3 1 2, human order (−rank) ranks 3 2 1 → dx 1 −1 0, dy 1 0 −1 → 1/√(2·2) = 0.5.
    expect(r.mean_spearman).toBeCloseTo(0.5, 12);
    expect(r.spearman_interval).toBeNull();
    expect(r.discordant).toEqual([{ better: "a1", worse: "a2", judge_better: 0.5, judge_worse: 0.7 }]);
    expect(r.pairwise_interval).toEqual(wilsonInterval(3, 4));
  });

  it("a constant judge whose copies average to float noise ties every pair: accuracy 0.5, nothing reversed", () => {
    // Six copies of 0.8 average to 0.7999999999999999, three to 0.8000000000000002 (binary floating point).
    const mean = (x: number, copies: number) => Array.from({ length: copies }, () => x).reduce((s, v) => s + v, 0) / copies;
    expect(mean(0.8, 6)).not.toBe(0.8);
    expect(mean(0.8, 3)).not.toBe(0.8);
    const groups = [
      { key: "p1", items: [mean(0.8, 6), 0.8, mean(0.8, 3)].map((judge, rank) => ({ judge, rank, ref: `p1-${rank}` })) },
      { key: "p2", items: [0.8, mean(0.8, 7)].map((judge, rank) => ({ judge, rank, ref: `p2-${rank}` })) },
    ];
    const r = rankingAgreement(groups);
    // 3 + 1 pairs, each a tie worth ½ → 2 / 4.
    expect(r).toMatchObject({ groups: 2, pairs: 4, ties: 4, pairwise_accuracy: 0.5, discordant: [], mean_spearman: null, spearman_undefined: 2 });
    expect(r.pairwise_interval).toEqual(wilsonInterval(2, 4));
  });

  it("scores that differ beyond the comparison precision still order", () => {
    const r = rankingAgreement([{ key: "g", items: [0.8000001, 0.8].map((judge, rank) => ({ judge, rank, ref: rank })) }]);
    expect(r).toMatchObject({ pairs: 1, ties: 0, pairwise_accuracy: 1 });
  });
});

describe("comparison precision", () => {
  it("reads float noise as equal, and keeps real differences", () => {
    expect(atScorePrecision(0.7999999999999999)).toBe(0.8);
    expect(atScorePrecision(0.8000000000000002)).toBe(0.8);
    expect(atScorePrecision(0.1 + 0.2)).toBe(0.3);
    expect(atScorePrecision(0.8000001)).toBe(0.8000001);
    expect(atScorePrecision(123456789.10000001)).toBe(123456789.1);
    expect(atScorePrecision(5.551115123125783e-17)).toBe(0);
  });

  it("Spearman and the pass/fail threshold read equal scores at that precision", () => {
    // Noise that would break the tie between the first two values: average ranks 1.5 1.5 3.
    expect(averageRanks([0.7999999999999999, 0.8, 0.9])).toEqual([1.5, 1.5, 3]);
    const figures = computeAgreement("score", items([[0.49999999999999994, true], [0.2, false]]), { threshold: 0.5 });
    expect(figures.accuracy).toBe(1);
  });
});
