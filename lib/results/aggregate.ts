/**
 * Per-metric aggregates of results (shared/API.md, "Aggregated"). Binning a number metric needs its
 * min and max before the first score is placed, so an aggregate is built in two steps: a `ScoreRange`
 * (from SQL over a whole execution, or from one look at an array), then an `Aggregator` fed score by
 * score. That lets an export of 100,000 results aggregate without holding the scores in memory.
 */
import type { OutputType, ResultStatus } from "@/lib/vocabulary";
import type { Aggregated } from "@/lib/schemas/executions";

export type ScoredResult = { status: ResultStatus; score: number | null };

/** What must be known before binning: how many results completed, how many have a score, their range. */
export type ScoreRange = { completed: number; scored: number; min: number | null; max: number | null };

export const PROGRESS_BINS = ["0.0-0.2", "0.2-0.4", "0.4-0.6", "0.6-0.8", "0.8-1.0"] as const;
// Exact edges: a score is compared against these literals, never binned with floor(x * 5), so that
// 0.6 lands in "0.6-0.8" and 0.6000000000000001 does too, while 0.5999999999999999 stays below.
const PROGRESS_EDGES = [0, 0.2, 0.4, 0.6, 0.8, 1];
const NUMBER_BIN_COUNT = 5;

/** A completed result counts towards the numbers only when its score is a finite number. */
export function hasScore(r: ScoredResult): r is ScoredResult & { score: number } {
  return r.status === "completed" && typeof r.score === "number" && Number.isFinite(r.score);
}

/** Index of the bin [edges[i], edges[i+1]) holding x; the last bin is closed, out-of-range values clamp. */
function binIndex(edges: readonly number[], x: number): number {
  const last = edges.length - 2;
  for (let i = 0; i < last; i++) if (x < edges[i + 1]) return i;
  return last;
}

/** Shortest decimal that still tells the edges apart: 1.2 rather than 1.2000000000000002. */
function edgeLabels(edges: number[]): string[] {
  for (let digits = 6; digits <= 17; digits++) {
    const text = edges.map((e) => String(Number(e.toPrecision(digits))));
    if (new Set(text).size === edges.length) return text;
  }
  return edges.map(String);
}

type Binning =
  | { kind: "none" }
  | { kind: "checkbox" }
  | { kind: "edges"; edges: number[]; labels: string[] };

function numberBinning(min: number, max: number): Binning {
  if (min === max) {
    const label = edgeLabels([min])[0];
    return { kind: "edges", edges: [min, max], labels: [`${label}-${label}`] };
  }
  const width = (max - min) / NUMBER_BIN_COUNT;
  const edges = Array.from({ length: NUMBER_BIN_COUNT + 1 }, (_, i) => (i === NUMBER_BIN_COUNT ? max : min + i * width));
  const text = edgeLabels(edges);
  return { kind: "edges", edges, labels: text.slice(0, -1).map((from, i) => `${from}-${text[i + 1]}`) };
}

const progressBinning: Binning = { kind: "edges", edges: PROGRESS_EDGES, labels: [...PROGRESS_BINS] };

function binningFor(outputType: OutputType, range: ScoreRange): Binning {
  switch (outputType) {
    case "text":
      return { kind: "none" };
    case "checkbox":
      return { kind: "checkbox" };
    case "progress":
      return progressBinning;
    case "number":
      return range.min === null || range.max === null ? { kind: "none" } : numberBinning(range.min, range.max);
    case "json":
      // A json metric whose scores all look like progress scores is binned like one.
      if (range.min === null || range.max === null || (range.min >= 0 && range.max <= 1)) return progressBinning;
      return numberBinning(range.min, range.max);
    case "pairwise":
      // Comparisons keep their verdicts in their own tables; a run never holds one.
      return { kind: "none" };
  }
}

/** Accumulates one metric's scores in a single pass; memory does not grow with the number of scores. */
export class Aggregator {
  private readonly binning: Binning;
  private readonly bins: number[];
  private n = 0;
  private sum = 0;
  private mean = 0;
  // Welford's running sum of squared deviations: stable where sum-of-squares minus square-of-sum is not.
  private m2 = 0;
  private min = Infinity;
  private max = -Infinity;

  constructor(
    private readonly outputType: OutputType,
    private readonly range: ScoreRange,
  ) {
    this.binning = binningFor(outputType, range);
    this.bins = this.binning.kind === "edges" ? this.binning.labels.map(() => 0) : [0, 0];
  }

  /** Add the score of one completed result (callers filter with `hasScore`). */
  add(score: number): void {
    if (this.outputType === "text") return;
    this.n += 1;
    this.sum += score;
    const delta = score - this.mean;
    this.mean += delta / this.n;
    this.m2 += delta * (score - this.mean);
    if (score < this.min) this.min = score;
    if (score > this.max) this.max = score;
    if (this.binning.kind === "edges") this.bins[binIndex(this.binning.edges, score)] += 1;
    else if (this.binning.kind === "checkbox") this.bins[score !== 0 ? 0 : 1] += 1;
  }

  result(): Aggregated {
    if (this.outputType === "text") {
      return { total: this.range.completed, average_score: null, min_score: null, max_score: null, std_dev: null, distribution: {} };
    }
    const distribution: Record<string, number> = {};
    if (this.binning.kind === "edges") this.binning.labels.forEach((label, i) => (distribution[label] = this.bins[i]));
    else if (this.binning.kind === "checkbox") Object.assign(distribution, { true: this.bins[0], false: this.bins[1] });
    if (this.n === 0) {
      return { total: 0, average_score: null, min_score: null, max_score: null, std_dev: null, distribution };
    }
    return {
      total: this.n,
      average_score: this.sum / this.n,
      min_score: this.min,
      max_score: this.max,
      std_dev: Math.sqrt(this.m2 / this.n),
      distribution,
    };
  }
}

/** The range of an in-memory set of results, for `Aggregator`. */
export function scoreRange(results: Iterable<ScoredResult>): ScoreRange {
  const range: ScoreRange = { completed: 0, scored: 0, min: null, max: null };
  for (const r of results) {
    if (r.status === "completed") range.completed += 1;
    if (!hasScore(r)) continue;
    range.scored += 1;
    range.min = range.min === null ? r.score : Math.min(range.min, r.score);
    range.max = range.max === null ? r.score : Math.max(range.max, r.score);
  }
  return range;
}

/** Aggregate of one metric's results: over completed results with a score, population std dev. */
export function aggregate(outputType: OutputType, results: Iterable<ScoredResult>): Aggregated {
  const list = Array.isArray(results) ? (results as ScoredResult[]) : [...results];
  const aggregator = new Aggregator(outputType, scoreRange(list));
  for (const r of list) if (hasScore(r)) aggregator.add(r.score);
  return aggregator.result();
}
