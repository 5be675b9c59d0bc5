/**
 * Agreement between two sources of verdicts on the same cells (an execution, the grid's latest results,
 * human labels, a reference from the data). Pure: it receives paired readings and returns the figures.
 * Source `b` is taken as the truth when naming false passes and false fails.
 */
import type { OutputType } from "@/lib/vocabulary";
import { atScorePrecision, cohensKappa, meanAbsoluteError, spearman, weightedKappa, wilsonInterval, type Interval } from "./stats";

export * from "./stats";
export * from "./regression";
export * from "./pairwise";
export * from "./bradley-terry";

/** One side's reading of a cell: pass/fail, a score, or a category. */
export type Reading = boolean | number | string;

export type EntityRef = { entity_type: "conversation" | "message" | "step"; entity_id: number; conversation_id: number };

export type PairedItem = EntityRef & { a: Reading; b: Reading };

/** How a metric's verdicts are compared: pass/fail (checkbox), scores (progress, number, json score), categories (text). */
export type AgreementKind = "binary" | "score" | "category";

export function agreementKind(outputType: OutputType): AgreementKind {
  if (outputType === "checkbox") return "binary";
  if (outputType === "text") return "category";
  return "score";
}

export type Confusion = {
  /** Categories; rows are source a, columns source b. For pass/fail: ["pass", "fail"]. */
  labels: string[];
  counts: number[][];
  /** a says pass, b (the truth) says fail. Empty for categories. */
  false_pass: EntityRef[];
  /** a says fail, b says pass. Empty for categories. */
  false_fail: EntityRef[];
};

export type AgreementFigures = {
  n: number;
  accuracy: number | null;
  kappa: number | null;
  spearman: number | null;
  mae: number | null;
  /** Scores on both sides: Cohen's kappa with quadratic weights over the values (ordinal scales). */
  weighted_kappa: number | null;
  /** The score that counted as a pass, when scores were compared as pass/fail. */
  threshold: number | null;
  /** Scores compared as scores: how far apart two scores may be and still agree. */
  tolerance: number | null;
  intervals: { accuracy: Interval | null; kappa: Interval | null; spearman: Interval | null; mae: Interval | null };
  confusion: Confusion | null;
  disagreements: Array<PairedItem>;
};

const passFail = (pass: boolean) => (pass ? "pass" : "fail");

function categoryOf(kind: AgreementKind, r: Reading, threshold: number | undefined): string {
  // A pass/fail reading (a reference with a rule) stays pass/fail whatever the metric's scale.
  if (kind === "binary" || typeof r === "boolean") return passFail(r === true);
  if (kind === "score" && threshold !== undefined) return passFail(atScorePrecision(Number(r)) >= atScorePrecision(threshold));
  return String(r);
}

function ref(item: PairedItem): EntityRef {
  return { entity_type: item.entity_type, entity_id: item.entity_id, conversation_id: item.conversation_id };
}

/**
 * The agreement figures of paired readings. Pass/fail and categories get accuracy, kappa and a confusion
 * matrix; scores get Spearman, MAE and quadratic-weighted kappa, plus (with `threshold`, a score ≥
 * threshold being a pass) the pass/fail figures, or without it accuracy as the share of scores at most
 * `tolerance` apart (default 0: equal).
 */
export function computeAgreement(kind: AgreementKind, items: readonly PairedItem[], opts: { threshold?: number; tolerance?: number } = {}): AgreementFigures {
  const n = items.length;
  const categorical = kind !== "score" || opts.threshold !== undefined;
  const out: AgreementFigures = {
    n,
    accuracy: null,
    kappa: null,
    spearman: null,
    mae: null,
    weighted_kappa: null,
    threshold: kind === "score" && opts.threshold !== undefined ? opts.threshold : null,
    tolerance: null,
    intervals: { accuracy: null, kappa: null, spearman: null, mae: null },
    confusion: null,
    disagreements: [],
  };
  if (kind === "score") {
    const xs = items.map((i) => Number(i.a));
    const ys = items.map((i) => Number(i.b));
    const rho = spearman(xs, ys);
    if (rho) {
      out.spearman = rho.rho;
      out.intervals.spearman = rho.interval;
    }
    const mae = meanAbsoluteError(xs, ys);
    if (mae) {
      out.mae = mae.mae;
      out.intervals.mae = mae.interval;
    }
    if (items.every((i) => typeof i.a === "number" && typeof i.b === "number")) {
      out.weighted_kappa = weightedKappa(items.map((i) => [Number(i.a), Number(i.b)] as const))?.kappa ?? null;
    }
  }
  if (!categorical) {
    const tolerance = opts.tolerance ?? 0;
    out.tolerance = tolerance;
    // A hair of slack so 0.8 vs 0.75 at a tolerance of 0.05 agrees despite binary floating point.
    const agrees = (i: PairedItem) => Math.abs(Number(i.a) - Number(i.b)) <= tolerance + 1e-9;
    const equal = items.filter(agrees).length;
    out.accuracy = n ? equal / n : null;
    out.intervals.accuracy = wilsonInterval(equal, n);
    out.disagreements = items
      .filter((i) => !agrees(i))
      .sort((x, y) => Math.abs(Number(y.a) - Number(y.b)) - Math.abs(Number(x.a) - Number(x.b)));
    return out;
  }
  const pairs = items.map((i) => [categoryOf(kind, i.a, opts.threshold), categoryOf(kind, i.b, opts.threshold)] as const);
  const agree = pairs.filter(([a, b]) => a === b).length;
  out.accuracy = n ? agree / n : null;
  out.intervals.accuracy = wilsonInterval(agree, n);
  const kappa = cohensKappa(pairs);
  if (kappa) {
    out.kappa = kappa.kappa;
    out.intervals.kappa = kappa.interval;
  }
  const binary = kind !== "category";
  const labels = binary ? ["pass", "fail"] : [...new Set(pairs.flat())].sort();
  const index = new Map(labels.map((l, i) => [l, i]));
  const counts = labels.map(() => labels.map(() => 0));
  const confusion: Confusion = { labels, counts, false_pass: [], false_fail: [] };
  pairs.forEach(([a, b], i) => {
    counts[index.get(a) ?? 0][index.get(b) ?? 0]++;
    if (a === b) return;
    out.disagreements.push(items[i]);
    if (binary && a === "pass") confusion.false_pass.push(ref(items[i]));
    if (binary && a === "fail") confusion.false_fail.push(ref(items[i]));
  });
  out.confusion = confusion;
  return out;
}
