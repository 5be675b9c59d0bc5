/**
 * The threshold strategy for score metrics, pure: the pass threshold (score ≥ t passes) that agrees best
 * with the truth on the training cells. Chosen on training folds only; the caller scores it on the fold
 * held out.
 */
import { atScorePrecision, cohensKappa } from "@/lib/agreement/stats";

export type ScoredTruth = { score: number; truth: "pass" | "fail" };

const verdictAt = (score: number, t: number): "pass" | "fail" => (atScorePrecision(score) >= atScorePrecision(t) ? "pass" : "fail");

/**
 * The threshold with the highest Cohen's kappa on these cells (ties: the higher accuracy, then the one
 * nearest `prior`, the metric's usual threshold). Candidates are the distinct scores seen, so every
 * possible split is tried. Null without cells.
 */
export function bestThreshold(cells: readonly ScoredTruth[], prior: number): number | null {
  if (cells.length === 0) return null;
  const candidates = [...new Set(cells.map((c) => atScorePrecision(c.score)))].sort((a, b) => a - b);
  let best: { t: number; kappa: number; accuracy: number } | null = null;
  for (const t of candidates) {
    const pairs = cells.map((c) => [verdictAt(c.score, t), c.truth] as const);
    const kappa = cohensKappa(pairs)?.kappa ?? 0;
    const accuracy = pairs.filter(([a, b]) => a === b).length / pairs.length;
    const better =
      !best ||
      kappa > best.kappa + 1e-12 ||
      (Math.abs(kappa - best.kappa) <= 1e-12 && (accuracy > best.accuracy + 1e-12 || (Math.abs(accuracy - best.accuracy) <= 1e-12 && Math.abs(t - prior) < Math.abs(best.t - prior))));
    if (better) best = { t, kappa, accuracy };
  }
  return best!.t;
}

/** A score read as pass/fail at a threshold. */
export function passAt(score: number, threshold: number): "pass" | "fail" {
  return verdictAt(score, threshold);
}
