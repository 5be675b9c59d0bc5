/**
 * How a reading becomes the class alignment compares, pure: pass/fail for pass/fail readings and for
 * scores (a score ≥ the pass threshold passes), the category itself for text metrics.
 */
import type { OutputType } from "@/lib/vocabulary";
import type { Reading } from "@/lib/agreement";

/** The pass threshold of progress scores (0..1), and of any scale without numeric truth to place it. */
export const DEFAULT_THRESHOLD = 0.5;

/**
 * The score that counts as a pass: 0.5 for progress (0..1); for number and json-score metrics the middle of
 * the scale the truth uses (labels 1…5 → 3), since 0.5 would pass every score of such a scale.
 */
export function passThreshold(outputType: OutputType, truth: readonly Reading[]): number {
  if (outputType === "progress") return DEFAULT_THRESHOLD;
  const scores = truth.filter((r): r is number => typeof r === "number");
  if (scores.length === 0) return DEFAULT_THRESHOLD;
  const lo = Math.min(...scores);
  const hi = Math.max(...scores);
  return (lo + hi) / 2;
}

/** A reading as the class alignment compares: pass/fail, or a category. */
export function classOf(outputType: OutputType, reading: Reading, threshold = DEFAULT_THRESHOLD): string {
  if (typeof reading === "boolean") return reading ? "pass" : "fail";
  if (outputType === "text") return String(reading);
  return Number(reading) >= threshold ? "pass" : "fail";
}
