/**
 * Agreement between two sources of a metric's verdicts: loads each source's reading per cell (one query
 * per source), pairs the cells both sources read, and hands them to the pure statistics in lib/agreement.
 */
import "server-only";
import { getExecutionRow } from "@/db/repositories/executions";
import { currentLabelRows } from "@/db/repositories/labels";
import { executionReadingRows, latestReadingRows, metaReadingRows } from "@/db/repositories/readings";
import type { PipelineNodeRow } from "@/db/schema";
import type { EvaluationLevel } from "@/lib/vocabulary";
import { agreementKind, computeAgreement, type PairedItem, type Reading } from "@/lib/agreement";
import { AppError, notFound } from "@/lib/errors";
import { assertDatasetExists } from "@/lib/datasets";
import { getMetricRow } from "@/lib/metrics/metrics";
import type { Agreement, MetricReference } from "@/lib/schemas/labels";
import { metaValue, readingOfLabelValue, readingOfMeta, readingOfResult } from "./readings";

type CellReadings = Map<string, { entity_type: EvaluationLevel; entity_id: number; conversation_id: number; reading: Reading }>;

const key = (type: string, id: number) => `${type}:${id}`;

const invalidSource = (which: "a" | "b", message: string) => new AppError("unprocessable", `Invalid source ${which}: ${message}`, [{ path: which, message }]);

/** The metric's reference, or 422 naming the parameter that asked for it. */
function referenceOf(node: PipelineNodeRow, which: "a" | "b"): MetricReference {
  const reference = (node.reference ?? null) as MetricReference | null;
  if (!reference) throw invalidSource(which, `metric ${node.id} has no reference; set one on the metric first`);
  return reference;
}

async function labelReadings(node: PipelineNodeRow, userId: string | undefined): Promise<CellReadings> {
  const out: CellReadings = new Map();
  // Newest first: the first label seen for a cell is its most recent one, whoever gave it.
  for (const row of await currentLabelRows(node.id, userId)) {
    const k = key(row.entityType, row.entityId);
    if (out.has(k)) continue;
    const reading = readingOfLabelValue(node.outputType, row.value);
    if (reading === undefined) continue;
    out.set(k, { entity_type: row.entityType, entity_id: row.entityId, conversation_id: row.conversationId, reading });
  }
  return out;
}

/** Every cell's reading from one source, keyed by cell. */
export async function readSource(node: PipelineNodeRow, source: string, which: "a" | "b"): Promise<CellReadings> {
  const out: CellReadings = new Map();
  if (source.startsWith("execution:")) {
    const id = Number(source.slice("execution:".length));
    const execution = await getExecutionRow(id);
    if (!execution) throw notFound("Execution", id);
    if (execution.datasetId !== node.datasetId) throw invalidSource(which, `execution ${id} is not of dataset ${node.datasetId}`);
    for (const row of await executionReadingRows(id, node.id)) {
      const reading = readingOfResult(node.outputType, row);
      if (reading !== undefined) out.set(key(row.entityType, row.entityId), { entity_type: row.entityType, entity_id: row.entityId, conversation_id: row.conversationId, reading });
    }
    return out;
  }
  if (source === "latest") {
    for (const row of await latestReadingRows(node.id, node.evaluationLevel)) {
      const reading = readingOfResult(node.outputType, row);
      if (reading !== undefined) out.set(key(row.entityType, row.entityId), { entity_type: row.entityType, entity_id: row.entityId, conversation_id: row.conversationId, reading });
    }
    return out;
  }
  if (source === "labels" || source.startsWith("labels:")) {
    return await labelReadings(node, source === "labels" ? undefined : source.slice("labels:".length));
  }
  // "reference": the metric's meta field through its rule, or the human labels it names.
  const reference = referenceOf(node, which);
  if (reference.source === "labels") return await labelReadings(node, reference.user_id);
  for (const row of await metaReadingRows(node.datasetId, node.evaluationLevel, reference.level, reference.path)) {
    const reading = readingOfMeta(reference, node.outputType, metaValue(row.value, row.jsonType));
    if (reading !== undefined) {
      out.set(key(node.evaluationLevel, row.entityId), { entity_type: node.evaluationLevel, entity_id: row.entityId, conversation_id: row.conversationId, reading });
    }
  }
  return out;
}

/** The default cut for a progress score compared with a pass/fail reading: ≥ 0.5 passes (shown in the answer). */
export const DEFAULT_PROGRESS_THRESHOLD = 0.5;
/** The default tolerance for two progress scores (0..1) to agree: 0.1 apart or less. Other scales: equal. */
export const DEFAULT_PROGRESS_TOLERANCE = 0.1;

/** A side whose every reading is pass/fail: booleans, or only 0 and 1 (pass/fail labels of a score metric). */
function readsPassFail(readings: readonly Reading[]): boolean {
  return readings.length > 0 && readings.every((r) => typeof r === "boolean" || r === 0 || r === 1);
}

/**
 * The score that counts as a pass when a score metric is compared as pass/fail and no threshold was
 * given: 0.5 on a progress metric; on other scales the middle of the scores the other side gave (a 1–5
 * judge against pass/fail labels passes at 3), 0.5 when there are none.
 */
function metricThreshold(outputType: string, scores: readonly Reading[]): number {
  if (outputType === "progress") return DEFAULT_PROGRESS_THRESHOLD;
  const numbers = scores.filter((r): r is number => typeof r === "number");
  if (numbers.length === 0) return DEFAULT_PROGRESS_THRESHOLD;
  return (Math.min(...numbers) + Math.max(...numbers)) / 2;
}

export async function getAgreement(q: { dataset_id: number; pipeline_node_id: number; a: string; b: string; threshold?: number; tolerance?: number; compare?: "auto" | "scores" | "pass_fail" }): Promise<Agreement> {
  await assertDatasetExists(q.dataset_id);
  const node = await getMetricRow(q.pipeline_node_id);
  if (node.datasetId !== q.dataset_id) {
    throw new AppError("unprocessable", `Invalid query: metric ${node.id} is not of dataset ${q.dataset_id}`, [
      { path: "pipeline_node_id", message: `must be a metric of dataset ${q.dataset_id}` },
    ]);
  }
  const a = await readSource(node, q.a, "a");
  const b = await readSource(node, q.b, "b");
  const items: PairedItem[] = [];
  for (const [k, ra] of a) {
    const rb = b.get(k);
    if (!rb) continue;
    items.push({ entity_type: ra.entity_type, entity_id: ra.entity_id, conversation_id: ra.conversation_id, a: ra.reading, b: rb.reading });
  }
  items.sort((x, y) => x.conversation_id - y.conversation_id || x.entity_id - y.entity_id);
  const kind = agreementKind(node.outputType);
  const passFail = items.some((i) => typeof i.a === "boolean" || typeof i.b === "boolean");
  // How a score metric is compared: as asked (compare, or a threshold / a tolerance given), else as the
  // readings are — a side that reads pass/fail (a rule's booleans, labels of only 0 and 1) makes it pass/fail
  // at the metric's threshold: a judge's 0.80 never equals a label's 1.0, so "as scores" read 0 agreement
  // where both said pass (issue 51.2).
  const asked = q.compare && q.compare !== "auto" ? q.compare : q.threshold !== undefined ? "pass_fail" : q.tolerance !== undefined ? "scores" : "auto";
  const aReadings = items.map((i) => i.a);
  const bReadings = items.map((i) => i.b);
  const binarySide = readsPassFail(aReadings) ? "a" : readsPassFail(bReadings) ? "b" : null;
  const asPassFail = kind === "score" && (passFail || asked === "pass_fail" || (asked === "auto" && binarySide !== null));
  let threshold: number | undefined;
  if (asPassFail) {
    const other = binarySide === "a" ? bReadings : binarySide === "b" ? aReadings : [...aReadings, ...bReadings];
    // A rule's booleans against a number scale still ask for the threshold (as before): its middle is a guess.
    threshold = q.threshold ?? (node.outputType === "progress" ? DEFAULT_PROGRESS_THRESHOLD : passFail ? undefined : metricThreshold(node.outputType, other));
  }
  if (kind === "score" && threshold === undefined && passFail) {
    // A pass/fail reference cannot be ranked against scores; it needs the score that counts as a pass.
    throw new AppError("unprocessable", "Invalid query: the reference reads pass/fail; give threshold, the score that counts as a pass", [
      { path: "threshold", message: `is required to compare a ${node.outputType} metric with a pass/fail reference` },
    ]);
  }
  const tolerance = q.tolerance ?? (node.outputType === "progress" ? DEFAULT_PROGRESS_TOLERANCE : 0);
  const figures = computeAgreement(kind, items, { threshold, tolerance });
  return {
    dataset_id: node.datasetId,
    pipeline_node_id: node.id,
    output_type: node.outputType,
    kind,
    a: q.a,
    b: q.b,
    compared_as: kind === "binary" ? "pass_fail" : kind === "category" ? "categories" : threshold !== undefined ? "pass_fail" : "scores",
    ...figures,
  };
}
