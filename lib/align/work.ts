/**
 * One alignment's work, end to end: the baseline (the metric's prompt on every truth cell), then each
 * strategy's candidate judged fold by fold on cells it was not built from, then the held-out figures, the
 * paired Δκ against the baseline and the recommendation; finally each candidate built once more from
 * every truth cell — the prompt promote would save.
 */
import "server-only";
import type { PipelineNodeRow } from "@/db/schema";
import type { Alignment, AlignmentStrategy } from "@/lib/schemas/alignments";
import { examplesSection, selectExamples, withExamples } from "./few-shot";
import { stratifiedFolds } from "./folds";
import { heldOutFigures, pairedKappaDelta, recommend, resamples } from "./held-out";
import { cellText, judgeCells, judgeMany, type JudgeContext } from "./judging";
import { fewShotExamples, foldPlans, thresholdVerdicts } from "./plan";
import { rewriteRubric, type RewriteCase } from "./rewrite";
import { bestThreshold } from "./threshold";
import { classOf } from "./classes";
import { cellKey, verdictOf, type Truth, type TruthCell } from "./truth";

export type WorkParams = { strategies: AlignmentStrategy[]; folds: number; seed: number; maxExamples: number; optimizerModel: string };
export type Report = Pick<Alignment, "baseline" | "candidates" | "folds_detail" | "recommended">;

/** Judge calls and optimiser calls an alignment makes (its progress total). */
export function plannedCalls(n: number, p: Pick<WorkParams, "strategies" | "folds">): { judge: number; optimizer: number } {
  const judged = p.strategies.filter((s) => s !== "threshold").length;
  return { judge: n * (1 + judged), optimizer: p.strategies.includes("rewrite") ? p.folds + 1 : 0 };
}

export async function alignmentWork(ctx: JudgeContext, node: PipelineNodeRow, truth: Truth, p: WorkParams): Promise<Report> {
  const cells = truth.cells;
  const n = cells.length;
  const truthClass = cells.map((c) => c.truth);
  const baseReadings = await judgeCells(ctx, node.prompt, cells);
  const baseline = baseReadings.map((r) => (r === null ? null : classOf(node.outputType, r, truth.threshold)));
  const folds = stratifiedFolds(cells, (c) => c.truth, p.folds, p.seed);
  const plans = foldPlans(folds, p.folds);
  const draws = resamples(n, { seed: p.seed });
  const texts = cells.map((c) => cellText(ctx.trees, c));
  const example = (i: number) => ({ text: texts[i], verdict: verdictOf(node, cells[i], truth.values.get(cellKey(cells[i].entityType, cells[i].entityId))) });
  const examples = fewShotExamples(plans, truthClass, baseline, { max: p.maxExamples, seed: p.seed });
  const candidates: Report["candidates"] = [];

  const scoreCandidate = (strategy: AlignmentStrategy, verdicts: Array<string | null>, extra: Partial<Report["candidates"][number]>) => {
    const delta = pairedKappaDelta(truthClass, baseline, verdicts, draws);
    candidates.push({
      strategy,
      held_out: heldOutFigures(truthClass, verdicts, draws),
      delta_kappa: delta,
      beats_baseline: Boolean(delta.interval && delta.interval[0] > 0),
      ...extra,
    });
  };

  // Every held-out cell of every strategy and fold is judged in one pool of calls (a fold never waits
  // for another's slowest call); what a strategy needs first (the optimiser's rubrics) is asked at once.
  const items: Array<{ cell: TruthCell; prompt: string; strategy: AlignmentStrategy; index: number }> = [];
  const extras = new Map<AlignmentStrategy, Partial<Report["candidates"][number]>>();
  if (p.strategies.includes("few_shot")) {
    for (const plan of plans) {
      const prompt = withExamples(node.prompt, examplesSection(examples[plan.fold].map(example), truth.source));
      for (const i of plan.heldOut) items.push({ cell: cells[i], prompt, strategy: "few_shot", index: i });
    }
    // The prompt to promote: examples chosen from every truth cell the same way.
    const all = selectExamples(cells.map((c, i) => ({ index: i, truth: c.truth, disagreement: baseline[i] !== null && baseline[i] !== c.truth })), { max: p.maxExamples, seed: p.seed });
    extras.set("few_shot", {
      prompt: withExamples(node.prompt, examplesSection(all.map(example), truth.source)),
      examples: all.map((i) => ({ entity_type: cells[i].entityType, entity_id: cells[i].entityId, verdict: example(i).verdict })),
    });
  }
  if (p.strategies.includes("rewrite")) {
    const cases = (indices: number[]): RewriteCase[] =>
      indices.filter((i) => baseline[i] !== truthClass[i]).map((i) => ({ text: texts[i], truth: truthClass[i], judged: baseline[i], notes: cells[i].notes }));
    const [final, ...perFold] = await Promise.all([cells.map((_, i) => i), ...plans.map((plan) => plan.training)].map((indices) => rewriteRubric(ctx, p.optimizerModel, node.prompt, cases(indices))));
    const errors: string[] = [];
    plans.forEach((plan, f) => {
      const rewritten = perFold[f];
      if ("error" in rewritten) errors.push(`fold ${plan.fold + 1}: ${rewritten.error}`);
      else for (const i of plan.heldOut) items.push({ cell: cells[i], prompt: rewritten.rubric, strategy: "rewrite", index: i });
    });
    if ("error" in final) errors.push(`every cell: ${final.error}`);
    extras.set("rewrite", { ...("rubric" in final ? { prompt: final.rubric } : {}), error: errors.length ? errors.join("; ") : null });
  }
  const readings = await judgeMany(ctx, items);
  const verdictsOf = new Map<AlignmentStrategy, Array<string | null>>();
  items.forEach((item, j) => {
    const v = verdictsOf.get(item.strategy) ?? cells.map(() => null);
    verdictsOf.set(item.strategy, v);
    v[item.index] = readings[j] === null ? null : classOf(node.outputType, readings[j]!, truth.threshold);
  });

  for (const strategy of p.strategies) {
    if (strategy === "threshold") {
      const scores = baseReadings.map((r) => (typeof r === "number" ? r : null));
      const { verdicts: held, thresholds } = thresholdVerdicts(plans, scores, truthClass, truth.threshold);
      const all = scores.flatMap((s, i) => (s === null || (truthClass[i] !== "pass" && truthClass[i] !== "fail") ? [] : [{ score: s, truth: truthClass[i] as "pass" | "fail" }]));
      scoreCandidate(strategy, held, { threshold: bestThreshold(all, truth.threshold), fold_thresholds: thresholds });
    } else {
      scoreCandidate(strategy, verdictsOf.get(strategy) ?? cells.map(() => null), extras.get(strategy) ?? {});
    }
  }
  return {
    baseline: heldOutFigures(truthClass, baseline, draws),
    candidates,
    folds_detail: plans.map((plan) => ({ fold: plan.fold + 1, held_out: plan.heldOut.map((i) => cells[i].entityId), examples: p.strategies.includes("few_shot") ? examples[plan.fold].map((i) => cells[i].entityId) : [] })),
    recommended: recommend(candidates.map((c) => ({ strategy: c.strategy, delta: { estimate: c.delta_kappa.estimate, interval: c.delta_kappa.interval, n: c.delta_kappa.n } }))) as AlignmentStrategy | null,
  };
}
