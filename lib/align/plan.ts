/**
 * What each fold of an alignment judges, pure: the held-out cells of each fold, the few-shot examples it
 * may use (from the other folds only), and the threshold chosen on the other folds for score metrics.
 */
import { selectExamples } from "./few-shot";
import { bestThreshold, passAt } from "./threshold";

export type FoldPlan = { fold: number; heldOut: number[]; training: number[] };

/** Each fold's held-out cells and training cells (every other fold). */
export function foldPlans(folds: readonly number[], k: number): FoldPlan[] {
  return Array.from({ length: k }, (_, fold) => ({
    fold,
    heldOut: folds.flatMap((f, i) => (f === fold ? [i] : [])),
    training: folds.flatMap((f, i) => (f !== fold ? [i] : [])),
  }));
}

/**
 * The examples of each fold: chosen among its training cells only (disagreements of the baseline with the
 * truth first, classes balanced), so no held-out cell is ever an example for its own fold.
 */
export function fewShotExamples(plans: readonly FoldPlan[], truth: readonly string[], baseline: ReadonlyArray<string | null>, opts: { max: number; seed: number }): number[][] {
  return plans.map((p) =>
    selectExamples(
      p.training.map((i) => ({ index: i, truth: truth[i], disagreement: baseline[i] !== null && baseline[i] !== truth[i] })),
      { max: opts.max, seed: opts.seed + p.fold },
    ),
  );
}

/**
 * Held-out pass/fail verdicts of a score metric at a threshold chosen on each fold's training cells, and
 * the thresholds chosen (per fold). A cell whose score is missing (a failed judge call) stays null.
 */
export function thresholdVerdicts(plans: readonly FoldPlan[], scores: ReadonlyArray<number | null>, truth: readonly string[], prior: number): { verdicts: Array<string | null>; thresholds: Array<number | null> } {
  const verdicts: Array<string | null> = scores.map(() => null);
  const thresholds = plans.map((p) => {
    const training = p.training.flatMap((i) => (scores[i] === null || (truth[i] !== "pass" && truth[i] !== "fail") ? [] : [{ score: scores[i]!, truth: truth[i] as "pass" | "fail" }]));
    const t = bestThreshold(training, prior);
    for (const i of p.heldOut) if (scores[i] !== null && t !== null) verdicts[i] = passAt(scores[i]!, t);
    return t;
  });
  return { verdicts, thresholds };
}
