/**
 * Held-out statistics of alignment, pure: κ, accuracy, TPR and TNR of verdicts against the truth, each
 * with a percentile bootstrap interval over cells, and the paired difference in κ between a candidate and
 * the baseline on the same resampled cells. "pass" is the positive class (TPR: passes the truth gives that
 * the judge also gives; TNR: the same for fails); for categories TPR and TNR are null.
 */
import { seededRandom } from "@/lib/agreement/regression";
import type { Interval } from "@/lib/agreement/stats";

export type Figures = { kappa: number | null; accuracy: number | null; tpr: number | null; tnr: number | null };
export type FigureIntervals = { kappa: Interval | null; accuracy: Interval | null; tpr: Interval | null; tnr: Interval | null };
export type HeldOut = Figures & { n: number; intervals: FigureIntervals };
export type Delta = { estimate: number | null; interval: Interval | null; n: number };

/** A verdict per cell (null: the judge failed on it, so it is left out) against the truth. */
export type Verdicts = ReadonlyArray<string | null>;

/** Verdicts and truth as small integers (a category's index; −1 for no verdict), so a resample only counts. */
type Encoded = { truth: Int32Array; verdicts: Int32Array; k: number; pass: number; fail: number; binary: boolean };

function encode(truth: readonly string[], verdicts: Verdicts): Encoded {
  const names = [...new Set([...truth, ...verdicts.filter((v): v is string => v !== null)])].sort();
  const index = new Map(names.map((c, i) => [c, i]));
  return {
    truth: Int32Array.from(truth, (t) => index.get(t)!),
    verdicts: Int32Array.from(verdicts, (v) => (v === null ? -1 : index.get(v)!)),
    k: names.length,
    pass: index.get("pass") ?? -1,
    fail: index.get("fail") ?? -1,
    binary: truth.every((t) => t === "pass" || t === "fail"),
  };
}

/** κ, accuracy, TPR and TNR of the cells at `at` (with repeats, as a resample gives them); Cohen's κ as lib/agreement computes it. */
function figuresAt(e: Encoded, at: ArrayLike<number>): Figures {
  const k = e.k;
  const rows = new Float64Array(k);
  const cols = new Float64Array(k);
  let n = 0, agree = 0, tp = 0, pos = 0, tn = 0, neg = 0;
  for (let j = 0; j < at.length; j++) {
    const i = at[j];
    const v = e.verdicts[i];
    if (v < 0) continue;
    const t = e.truth[i];
    n++;
    rows[v]++;
    cols[t]++;
    if (v === t) agree++;
    if (t === e.pass) {
      pos++;
      if (v === e.pass) tp++;
    } else if (t === e.fail) {
      neg++;
      if (v === e.fail) tn++;
    }
  }
  let pe = 0;
  for (let c = 0; c < k; c++) pe += (rows[c] / n) * (cols[c] / n);
  const po = agree / n;
  return {
    kappa: n === 0 || pe >= 1 ? null : (po - pe) / (1 - pe),
    accuracy: n ? po : null,
    tpr: e.binary && pos ? tp / pos : null,
    tnr: e.binary && neg ? tn / neg : null,
  };
}

const allIndices = (n: number) => Array.from({ length: n }, (_, i) => i);

/** Resamples of the cells (with replacement), the same for every strategy of one report (seeded). */
export function resamples(n: number, opts: { iterations?: number; seed?: number } = {}): number[][] {
  const random = seededRandom(opts.seed ?? 1);
  return Array.from({ length: opts.iterations ?? 1000 }, () => Array.from({ length: n }, () => Math.floor(random() * n)));
}

function percentile(values: number[]): Interval | null {
  if (values.length < 2) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))];
  return [at(0.025), at(0.975)];
}

/** The figures of these verdicts over every cell, with bootstrap intervals over `draws`. */
export function heldOutFigures(truth: readonly string[], verdicts: Verdicts, draws: readonly number[][]): HeldOut {
  const e = encode(truth, verdicts);
  const point = figuresAt(e, allIndices(truth.length));
  const samples: Record<keyof Figures, number[]> = { kappa: [], accuracy: [], tpr: [], tnr: [] };
  for (const at of draws) {
    const f = figuresAt(e, at);
    for (const k of Object.keys(samples) as Array<keyof Figures>) if (f[k] !== null) samples[k].push(f[k]);
  }
  return {
    ...point,
    n: verdicts.filter((v) => v !== null).length,
    intervals: {
      kappa: point.kappa === null ? null : percentile(samples.kappa),
      accuracy: point.accuracy === null ? null : percentile(samples.accuracy),
      tpr: point.tpr === null ? null : percentile(samples.tpr),
      tnr: point.tnr === null ? null : percentile(samples.tnr),
    },
  };
}

/**
 * κ(candidate) − κ(baseline) on the cells both judged, and its paired bootstrap interval: each resample
 * takes the same cells for both, so what the two share (hard cells, easy cells) cancels out.
 */
export function pairedKappaDelta(truth: readonly string[], baseline: Verdicts, candidate: Verdicts, draws: readonly number[][]): Delta {
  const inBoth = (i: number) => baseline[i] !== null && candidate[i] !== null;
  const both = allIndices(truth.length).filter(inBoth);
  const eb = encode(truth, baseline);
  const ec = encode(truth, candidate);
  const kb = figuresAt(eb, both).kappa;
  const kc = figuresAt(ec, both).kappa;
  const estimate = kb === null || kc === null ? null : kc - kb;
  const deltas: number[] = [];
  const all = both.length === truth.length;
  for (const at of draws) {
    const sample = all ? at : at.filter(inBoth);
    const b = figuresAt(eb, sample).kappa;
    const c = figuresAt(ec, sample).kappa;
    if (b !== null && c !== null) deltas.push(c - b);
  }
  return { estimate, interval: estimate === null ? null : percentile(deltas), n: both.length };
}

/** The recommended strategy: among those whose Δκ interval lies above zero, the largest Δκ; else none. */
export function recommend(candidates: ReadonlyArray<{ strategy: string; delta: Delta }>): string | null {
  let best: { strategy: string; estimate: number } | null = null;
  for (const c of candidates) {
    if (!c.delta.interval || c.delta.estimate === null || !(c.delta.interval[0] > 0)) continue;
    if (!best || c.delta.estimate > best.estimate) best = { strategy: c.strategy, estimate: c.delta.estimate };
  }
  return best?.strategy ?? null;
}
