/**
 * Agreement between the people who labelled a metric's cells: each annotator's current labels as one
 * source, every pair of annotators compared on the cells both labelled (Cohen's kappa for pass/fail and
 * categories, quadratic-weighted kappa for scores, from lib/agreement). A note without a verdict is not a
 * label here: it neither counts as labelled nor enters a comparison.
 */
import "server-only";
import { currentLabelRows } from "@/db/repositories/labels";
import { agreementKind, computeAgreement, type PairedItem, type Reading } from "@/lib/agreement";
import { AppError } from "@/lib/errors";
import { assertDatasetExists } from "@/lib/datasets";
import { getMetricRow } from "@/lib/metrics/metrics";
import type { AnnotatorAgreement } from "@/lib/schemas/labels";
import { DEFAULT_PROGRESS_TOLERANCE } from "./agreement-report";
import { labelAuthorKinds } from "./authors";
import { readingOfLabelValue } from "./readings";

type Cell = { entity_type: PairedItem["entity_type"]; entity_id: number; conversation_id: number; reading: Reading };

export async function getAnnotatorAgreement(q: { dataset_id: number; pipeline_node_id: number; threshold?: number; tolerance?: number }): Promise<AnnotatorAgreement> {
  await assertDatasetExists(q.dataset_id);
  const node = await getMetricRow(q.pipeline_node_id);
  if (node.datasetId !== q.dataset_id) {
    throw new AppError("unprocessable", `Invalid query: metric ${node.id} is not of dataset ${q.dataset_id}`, [
      { path: "pipeline_node_id", message: `must be a metric of dataset ${q.dataset_id}` },
    ]);
  }
  // user → cell → reading; notes without a verdict counted apart.
  const byUser = new Map<string, Map<string, Cell>>();
  const notesOnly = new Map<string, number>();
  for (const row of await currentLabelRows(node.id)) {
    const cells = byUser.get(row.userId) ?? new Map<string, Cell>();
    byUser.set(row.userId, cells);
    const reading = readingOfLabelValue(node.outputType, row.value);
    if (reading === undefined) {
      notesOnly.set(row.userId, (notesOnly.get(row.userId) ?? 0) + 1);
      continue;
    }
    cells.set(`${row.entityType}:${row.entityId}`, { entity_type: row.entityType, entity_id: row.entityId, conversation_id: row.conversationId, reading });
  }
  const users = [...byUser.keys()].sort();
  const kind = agreementKind(node.outputType);
  const tolerance = q.tolerance ?? (node.outputType === "progress" ? DEFAULT_PROGRESS_TOLERANCE : 0);
  const pairs: AnnotatorAgreement["pairs"] = [];
  for (let i = 0; i < users.length; i++) {
    for (let j = i + 1; j < users.length; j++) {
      const a = byUser.get(users[i])!;
      const b = byUser.get(users[j])!;
      const items: PairedItem[] = [];
      for (const [k, ca] of a) {
        const cb = b.get(k);
        if (cb) items.push({ entity_type: ca.entity_type, entity_id: ca.entity_id, conversation_id: ca.conversation_id, a: ca.reading, b: cb.reading });
      }
      if (!items.length) continue;
      items.sort((x, y) => x.conversation_id - y.conversation_id || x.entity_id - y.entity_id);
      const f = computeAgreement(kind, items, { threshold: q.threshold, tolerance });
      pairs.push({
        a: users[i],
        b: users[j],
        n: f.n,
        accuracy: f.accuracy,
        kappa: f.kappa,
        weighted_kappa: f.weighted_kappa,
        threshold: f.threshold,
        tolerance: f.tolerance,
        intervals: { accuracy: f.intervals.accuracy, kappa: f.intervals.kappa },
        disagreements: f.disagreements.length,
      });
    }
  }
  const kinds = await labelAuthorKinds(users);
  return {
    dataset_id: node.datasetId,
    pipeline_node_id: node.id,
    output_type: node.outputType,
    kind,
    annotators: users.map((user_id) => ({ user_id, labelled: byUser.get(user_id)!.size, notes_only: notesOnly.get(user_id) ?? 0, who: kinds.get(user_id)! })),
    pairs,
  };
}
