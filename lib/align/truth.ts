/**
 * The truth an alignment learns from and is scored against: people's current labels of the metric (the
 * most recent per cell, with every note people left) or the metric's reference, each reading turned into
 * a class — pass/fail for pass/fail and score metrics (a score ≥ the metric's threshold passes), the
 * category itself for text metrics. With two or more annotators their κ comes first.
 */
import "server-only";
import { currentLabelRows } from "@/db/repositories/labels";
import type { PipelineNodeRow } from "@/db/schema";
import type { EvaluationLevel } from "@/lib/vocabulary";
import type { Reading } from "@/lib/agreement";
import { AppError } from "@/lib/errors";
import { getAnnotatorAgreement } from "@/lib/labels/annotators";
import { readSource } from "@/lib/labels/agreement-report";
import { readingOfLabelValue } from "@/lib/labels/readings";
import { classOf, passThreshold } from "./classes";

export type TruthCell = {
  entityType: EvaluationLevel;
  entityId: number;
  conversationId: number;
  reading: Reading;
  /** pass / fail, or the category. */
  truth: string;
  /** People's notes on the cell (rewrite reads them). */
  notes: string[];
};

/** Annotators below this κ are warned about: a judge cannot be aligned to people who disagree with each other. */
export const ANNOTATOR_KAPPA_WARNING = 0.6;

/** A verdict an example shows, as the metric's result would hold it. */
export function verdictOf(node: Pick<PipelineNodeRow, "outputType">, cell: TruthCell, labelValue?: unknown): Record<string, unknown> {
  const pass = cell.truth === "pass";
  switch (node.outputType) {
    case "checkbox":
      return { value: pass };
    case "progress":
      return { score: typeof cell.reading === "number" ? cell.reading : pass ? 1 : 0 };
    case "number":
      return { value: typeof cell.reading === "number" ? cell.reading : pass ? 1 : 0 };
    case "text":
      return { value: cell.truth };
    case "json":
      return labelValue && typeof labelValue === "object" ? (labelValue as Record<string, unknown>) : { score: typeof cell.reading === "number" ? cell.reading : pass ? 1 : 0 };
    case "pairwise":
      // Never reached: pairwise metrics are refused before any truth is read (lib/align/index.ts).
      return { value: cell.truth };
  }
}

const noTruth = (message: string) => new AppError("unprocessable", `No truth to align to: ${message}`, [{ path: "truth", message }]);

export type Truth = {
  /** Where the truth comes from: people's labels, or the metric's reference (the file's own outcome). */
  source: "labels" | "reference";
  cells: TruthCell[];
  /** Label values by cell key (json metrics' examples show them as given). */
  values: Map<string, unknown>;
  /** The score that counts as a pass (scores read as pass/fail, on both the truth's side and the judge's). */
  threshold: number;
  annotatorKappa: number | null;
  annotatorPairs: Array<{ a: string; b: string; n: number; kappa: number | null }>;
  warnings: string[];
};

export const cellKey = (type: string, id: number) => `${type}:${id}`;

/** The truth cells of a metric in grid order; 422 naming why when there is none to align to. */
export async function loadTruth(node: PipelineNodeRow, truth: "labels" | "reference", folds: number): Promise<Truth> {
  const labels = await currentLabelRows(node.id);
  const notes = new Map<string, string[]>();
  const values = new Map<string, unknown>();
  for (const l of labels) {
    const k = cellKey(l.entityType, l.entityId);
    if (l.note) notes.set(k, [...(notes.get(k) ?? []), l.note]);
    if (!values.has(k) && l.value !== null) values.set(k, l.value);
  }
  const cells: TruthCell[] = [];
  if (truth === "labels") {
    const seen = new Set<string>();
    // Newest first: a cell's first label with a verdict is its most recent one, whoever gave it.
    for (const l of labels) {
      const k = cellKey(l.entityType, l.entityId);
      if (seen.has(k)) continue;
      const reading = readingOfLabelValue(node.outputType, l.value);
      if (reading === undefined) continue;
      seen.add(k);
      cells.push({ entityType: l.entityType, entityId: l.entityId, conversationId: l.conversationId, reading, truth: "", notes: notes.get(k) ?? [] });
    }
    if (cells.length === 0) throw noTruth(`metric ${node.id} has no labels with a verdict; label some cells first (a note alone is not a verdict)`);
  } else {
    if (!node.reference) throw noTruth(`metric ${node.id} has no reference; set one on the metric (e.g. meta.reward with a rule) or use truth "labels"`);
    for (const r of (await readSource(node, "reference", "b")).values()) {
      const k = cellKey(r.entity_type, r.entity_id);
      cells.push({ entityType: r.entity_type, entityId: r.entity_id, conversationId: r.conversation_id, reading: r.reading, truth: "", notes: notes.get(k) ?? [] });
    }
    if (cells.length === 0) throw noTruth(`the reference of metric ${node.id} reads no cell (the meta field is missing everywhere)`);
  }
  cells.sort((a, b) => a.conversationId - b.conversationId || a.entityId - b.entityId);
  const threshold = passThreshold(node.outputType, cells.map((c) => c.reading));
  for (const c of cells) c.truth = classOf(node.outputType, c.reading, threshold);
  const classes = new Set(cells.map((c) => c.truth));
  if (classes.size < 2) throw noTruth(`every one of the ${cells.length} truth cells reads "${[...classes][0]}": κ is undefined with one class; label cells of both kinds`);
  if (cells.length < 2 * folds) throw noTruth(`${cells.length} truth cells are too few for ${folds} folds (at least ${2 * folds}: two per fold)`);

  // People's agreement matters only when people are the truth: with the reference (the file's reward) as
  // the truth, annotators who disagree say nothing about it and are not warned about (issue 51.3).
  const annotators =
    truth === "labels"
      ? await getAnnotatorAgreement({ dataset_id: node.datasetId, pipeline_node_id: node.id, threshold: node.outputType === "checkbox" || node.outputType === "text" ? undefined : threshold })
      : { pairs: [] };
  const pairs = annotators.pairs.map((p) => ({ a: p.a, b: p.b, n: p.n, kappa: p.kappa })).sort((x, y) => y.n - x.n);
  const annotatorKappa = pairs[0]?.kappa ?? null;
  const warnings: string[] = [];
  if (pairs[0] && annotatorKappa !== null && annotatorKappa < ANNOTATOR_KAPPA_WARNING) {
    warnings.push(
      `annotators ${pairs[0].a} and ${pairs[0].b} agree at κ ${annotatorKappa.toFixed(2)} on ${pairs[0].n} cells (below ${ANNOTATOR_KAPPA_WARNING}): a judge cannot be aligned to people who disagree with each other; settle the labels first`,
    );
  }
  return { source: truth, cells, values, threshold, annotatorKappa, annotatorPairs: pairs, warnings };
}
