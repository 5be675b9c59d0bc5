/**
 * The pure core of alignment: stratified folds, few-shot examples that never leak the fold being scored,
 * thresholds chosen on training folds, and held-out figures worked by hand.
 */
import { describe, expect, it } from "vitest";
import { classOf, passThreshold } from "./classes";
import { EXAMPLES_BEGIN, EXAMPLES_END, examplesSection, selectExamples, stripExamples, withExamples } from "./few-shot";
import { stratifiedFolds } from "./folds";
import { heldOutFigures, pairedKappaDelta, recommend, resamples } from "./held-out";
import { fewShotExamples, foldPlans, thresholdVerdicts } from "./plan";
import { bestThreshold } from "./threshold";

describe("stratifiedFolds", () => {
  it("spreads each class evenly over the folds, the same way for the same seed", () => {
    const truth = [...Array(23).fill("pass"), ...Array(12).fill("fail")] as string[];
    const folds = stratifiedFolds(truth, (t) => t, 5, 7);
    expect(stratifiedFolds(truth, (t) => t, 5, 7)).toEqual(folds);
    expect(stratifiedFolds(truth, (t) => t, 5, 8)).not.toEqual(folds);
    for (const cls of ["pass", "fail"]) {
      const counts = [0, 1, 2, 3, 4].map((f) => folds.filter((x, i) => x === f && truth[i] === cls).length);
      expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    }
    const sizes = [0, 1, 2, 3, 4].map((f) => folds.filter((x) => x === f).length);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
  });

  it("refuses fewer than two folds", () => {
    expect(() => stratifiedFolds(["pass"], (t) => t, 1, 1)).toThrow(/at least 2/);
  });
});

describe("few-shot examples", () => {
  it("takes disagreements first, balances the classes and stops at max", () => {
    const candidates = [
      { index: 0, truth: "pass", disagreement: false },
      { index: 1, truth: "pass", disagreement: true },
      { index: 2, truth: "pass", disagreement: false },
      { index: 3, truth: "pass", disagreement: false },
      { index: 4, truth: "fail", disagreement: false },
      { index: 5, truth: "fail", disagreement: true },
      { index: 6, truth: "fail", disagreement: true },
    ];
    const chosen = selectExamples(candidates, { max: 4, seed: 3 });
    expect(chosen).toHaveLength(4);
    // Classes in turn (fail, pass, fail, pass): both fail disagreements and the one pass disagreement come first.
    expect(chosen.filter((i) => candidates[i].truth === "pass")).toHaveLength(2);
    expect(chosen.filter((i) => candidates[i].truth === "fail").sort()).toEqual([5, 6]);
    expect(chosen[1]).toBe(1);
  });

  it("leakage: no cell is judged with itself or any cell of its own held-out fold as an example", () => {
    const n = 60;
    const truth = Array.from({ length: n }, (_, i) => (i % 3 === 0 ? "fail" : "pass"));
    const baseline = Array.from({ length: n }, (_, i) => (i % 4 === 0 ? "fail" : "pass"));
    const folds = stratifiedFolds(truth, (t) => t, 5, 11);
    const plans = foldPlans(folds, 5);
    const examples = fewShotExamples(plans, truth, baseline, { max: 8, seed: 11 });
    expect(plans.flatMap((p) => p.heldOut).sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
    plans.forEach((p, f) => {
      expect(examples[f].length).toBe(8);
      for (const e of examples[f]) {
        expect(folds[e]).not.toBe(p.fold);
        expect(p.heldOut).not.toContain(e);
      }
    });
  });

  it("writes a marked section that a second alignment replaces rather than doubles", () => {
    const section = examplesSection([{ text: "user asked @HISTORY things", verdict: { value: true } }]);
    expect(section.startsWith(EXAMPLES_BEGIN)).toBe(true);
    expect(section.endsWith(EXAMPLES_END)).toBe(true);
    expect(section).toContain("user asked ＠HISTORY things");
    expect(section).toContain('Verdict: {"value":true}');
    const once = withExamples("Did it work? @HISTORY", section);
    const twice = withExamples(once, examplesSection([{ text: "other", verdict: { value: false } }]));
    expect(twice.split(EXAMPLES_BEGIN)).toHaveLength(2);
    expect(stripExamples(twice)).toBe("Did it work? @HISTORY");
    // A prompt promoted when the section opened with its earlier line still has it replaced, not doubled.
    const earlier = "=== Examples labelled by people (alignment) ===\nCells people labelled.\n--- Example 1 ---\nold\nVerdict: true\n=== End of examples ===\n\nDid it work? @HISTORY";
    expect(stripExamples(earlier)).toBe("Did it work? @HISTORY");
  });
});

describe("held-out figures, worked by hand", () => {
  // Eight cells, truth P P P P F F F F. Two folds given by hand: fold 0 = cells {0, 1, 4, 6}, fold 1 = {2, 3, 5, 7}.
  // Judge scores: 0.9 0.8 0.85 0.75 | 0.6 0.55 0.3 0.2.
  //
  // Baseline (a score ≥ 0.5 passes): P P P P P P F F — it passes the two fails scored 0.6 and 0.55.
  //   TP 4, FN 0, TN 2, FP 2 → TPR 4/4 = 1, TNR 2/4 = 0.5, accuracy 6/8 = 0.75.
  //   Judge passes 6/8, truth passes 4/8: pe = 6/8·4/8 + 2/8·4/8 = 0.5; κ = (0.75 − 0.5)/(1 − 0.5) = 0.5.
  //
  // Threshold, chosen on the training fold only:
  //   fold 0 is scored with the threshold of fold 1's cells (0.85 P, 0.75 P, 0.55 F, 0.2 F): t = 0.75 splits them
  //   perfectly (κ 1). Held out 0.9 → P, 0.8 → P, 0.6 → F, 0.3 → F: all right.
  //   fold 1 is scored with the threshold of fold 0's cells (0.9 P, 0.8 P, 0.6 F, 0.3 F): t = 0.8 (κ 1). Held out
  //   0.85 → P, 0.75 → F (wrong: truth P), 0.55 → F, 0.2 → F.
  // After: P P P F F F F F. TP 3, FN 1, TN 4, FP 0 → TPR 3/4 = 0.75, TNR 4/4 = 1, accuracy 7/8 = 0.875.
  //   Judge passes 3/8: pe = 3/8·4/8 + 5/8·4/8 = 0.5; κ = (0.875 − 0.5)/0.5 = 0.75. Δκ = 0.75 − 0.5 = +0.25.
  const truth = ["pass", "pass", "pass", "pass", "fail", "fail", "fail", "fail"];
  const scores = [0.9, 0.8, 0.85, 0.75, 0.6, 0.55, 0.3, 0.2];
  const folds = [0, 0, 1, 1, 0, 1, 0, 1];

  it("gives κ, accuracy, TPR and TNR before and after the threshold found on training folds", () => {
    const baseline = scores.map((s) => (s >= 0.5 ? "pass" : "fail"));
    const plans = foldPlans(folds, 2);
    const { verdicts, thresholds } = thresholdVerdicts(plans, scores, truth, 0.5);
    expect(thresholds).toEqual([0.75, 0.8]);
    expect(verdicts).toEqual(["pass", "pass", "pass", "fail", "fail", "fail", "fail", "fail"]);
    const draws = resamples(truth.length, { iterations: 500, seed: 5 });
    const before = heldOutFigures(truth, baseline, draws);
    const after = heldOutFigures(truth, verdicts, draws);
    expect(before).toMatchObject({ n: 8, accuracy: 0.75, tpr: 1, tnr: 0.5 });
    expect(before.kappa).toBeCloseTo(0.5, 12);
    expect(after).toMatchObject({ n: 8, accuracy: 0.875, tpr: 0.75, tnr: 1 });
    expect(after.kappa).toBeCloseTo(0.75, 12);
    const delta = pairedKappaDelta(truth, baseline, verdicts, draws);
    expect(delta.estimate).toBeCloseTo(0.25, 12);
    expect(delta.interval![0]).toBeLessThanOrEqual(0.25);
    expect(delta.interval![1]).toBeGreaterThanOrEqual(0.25);
    for (const f of [before, after]) {
      const [lo, hi] = f.intervals.kappa!;
      expect(lo).toBeLessThanOrEqual(f.kappa!);
      expect(hi).toBeGreaterThanOrEqual(f.kappa!);
    }
    // Eight cells cannot prove +0.25: the paired interval reaches zero, so nothing is recommended.
    expect(delta.interval![0]).toBeLessThanOrEqual(0);
    expect(recommend([{ strategy: "threshold", delta }])).toBeNull();
  });

  it("recommends only a candidate whose Δκ interval lies above zero, the largest first", () => {
    const d = (estimate: number, lo: number, hi: number) => ({ estimate, interval: [lo, hi] as [number, number], n: 10 });
    expect(recommend([{ strategy: "few_shot", delta: d(0.3, -0.01, 0.6) }])).toBeNull();
    expect(recommend([{ strategy: "few_shot", delta: d(0.2, 0.05, 0.4) }, { strategy: "rewrite", delta: d(0.3, 0.1, 0.5) }])).toBe("rewrite");
  });

  it("chooses no threshold without cells and prefers the one nearest the prior on ties", () => {
    expect(bestThreshold([], 0.5)).toBeNull();
    expect(bestThreshold([{ score: 0.2, truth: "fail" }, { score: 0.9, truth: "pass" }], 0.5)).toBe(0.9);
  });
});

describe("classes", () => {
  it("reads scores at the middle of the truth's scale (labels 1…5 → 3), progress at 0.5, booleans and categories as they are", () => {
    expect(passThreshold("number", [1, 5, 4, 2])).toBe(3);
    expect(passThreshold("progress", [0.9, 0.95])).toBe(0.5);
    expect(passThreshold("number", [true, false])).toBe(0.5);
    expect(classOf("number", 3, 3)).toBe("pass");
    expect(classOf("number", 2, 3)).toBe("fail");
    expect(classOf("progress", true)).toBe("pass");
    expect(classOf("text", "refund")).toBe("refund");
  });
});
