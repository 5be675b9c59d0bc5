/**
 * A message metric's agreement with human rankings among sibling replies (Open Assistant trees: several
 * assistant replies to one prompt, `meta.rank` 0 = best, `meta.parent_id` naming the prompt). Loads the
 * judge's reading per message and the messages' rank, group and id from their meta; the statistics are
 * lib/agreement's. A reply stored on several root-to-leaf paths is one item (its copies' scores averaged).
 */
import "server-only";
import { metaReadingRows } from "@/db/repositories/readings";
import { rankingAgreement, type EntityRef, type RankingAgreement } from "@/lib/agreement";
import { AppError } from "@/lib/errors";
import { assertDatasetExists } from "@/lib/datasets";
import { getMetricRow } from "@/lib/metrics/metrics";
import { readSource } from "./agreement-report";
import { metaValue } from "./readings";
import { comparisonRankingAgreement } from "./ranking-pairwise";

export type RankingQuery = { dataset_id: number; pipeline_node_id: number; a: string; rank_path: string; group_path: string; id_path: string; pointwise_node_id?: number };
export type Ranking = Omit<RankingAgreement<EntityRef>, "discordant"> & {
  dataset_id: number;
  pipeline_node_id: number;
  a: string;
  rank_path: string;
  group_path: string;
  /** Judged replies with a rank and a group. */
  items: number;
  discordant: Array<{ better: EntityRef; worse: EntityRef; judge_better: number; judge_worse: number }>;
  pointwise?: { pipeline_node_id: number; a: string; pairs: number; pairwise_accuracy: number | null; ties: number; pairwise_interval: [number, number] | null };
};

async function metaByMessage(datasetId: number, path: string): Promise<Map<number, boolean | number | string>> {
  const out = new Map<number, boolean | number | string>();
  for (const row of await metaReadingRows(datasetId, "message", "message", path)) {
    const value = metaValue(row.value, row.jsonType);
    if (value !== undefined) out.set(row.entityId, value);
  }
  return out;
}

export async function getRankingAgreement(q: RankingQuery): Promise<Ranking> {
  await assertDatasetExists(q.dataset_id);
  if (q.a.startsWith("comparison:")) {
    const ranks = await metaByMessage(q.dataset_id, q.rank_path);
    const figures = await comparisonRankingAgreement(q, ranks);
    if (q.pointwise_node_id === undefined) return figures;
    const pointwise = await getRankingAgreement({ ...q, pipeline_node_id: q.pointwise_node_id, a: "latest", pointwise_node_id: undefined });
    const { pairs, pairwise_accuracy, ties, pairwise_interval } = pointwise;
    return { ...figures, pointwise: { pipeline_node_id: q.pointwise_node_id, a: "latest", pairs, pairwise_accuracy, ties, pairwise_interval } };
  }
  if (q.pointwise_node_id !== undefined) {
    throw new AppError("unprocessable", "Invalid query: pointwise_node_id goes with a=comparison:<id>", [{ path: "pointwise_node_id", message: "only with a=comparison:<id>" }]);
  }
  const node = await getMetricRow(q.pipeline_node_id);
  if (node.datasetId !== q.dataset_id) {
    throw new AppError("unprocessable", `Invalid query: metric ${node.id} is not of dataset ${q.dataset_id}`, [{ path: "pipeline_node_id", message: `must be a metric of dataset ${q.dataset_id}` }]);
  }
  if (node.evaluationLevel !== "message") {
    throw new AppError("unprocessable", "Invalid query: ranking agreement compares sibling replies, so the metric must be judged per message", [
      { path: "pipeline_node_id", message: `metric ${node.id} is judged per ${node.evaluationLevel}` },
    ]);
  }
  if (node.outputType === "text") {
    throw new AppError("unprocessable", "Invalid query: a text metric gives no score to order replies by", [{ path: "pipeline_node_id", message: "needs a score or pass/fail metric" }]);
  }
  const judged = await readSource(node, q.a, "a");
  const [ranks, groups, ids] = await Promise.all([metaByMessage(node.datasetId, q.rank_path), metaByMessage(node.datasetId, q.group_path), metaByMessage(node.datasetId, q.id_path)]);
  // group → reply id → its copies' scores and the first copy as the cell to show.
  const byGroup = new Map<string, Map<string, { scores: number[]; rank: number; ref: EntityRef }>>();
  let items = 0;
  for (const cell of judged.values()) {
    const rank = ranks.get(cell.entity_id);
    const group = groups.get(cell.entity_id);
    if (typeof rank !== "number" || group === undefined) continue;
    const score = typeof cell.reading === "boolean" ? (cell.reading ? 1 : 0) : typeof cell.reading === "number" ? cell.reading : undefined;
    if (score === undefined) continue;
    const replies = byGroup.get(String(group)) ?? new Map();
    byGroup.set(String(group), replies);
    const id = String(ids.get(cell.entity_id) ?? `message:${cell.entity_id}`);
    const reply = replies.get(id);
    if (reply) reply.scores.push(score);
    else {
      replies.set(id, { scores: [score], rank, ref: { entity_type: "message", entity_id: cell.entity_id, conversation_id: cell.conversation_id } });
      items++;
    }
  }
  const figures = rankingAgreement(
    [...byGroup].map(([key, replies]) => ({
      key,
      items: [...replies.values()].map((r) => ({ judge: r.scores.reduce((s, x) => s + x, 0) / r.scores.length, rank: r.rank, ref: r.ref })),
    })),
  );
  return { dataset_id: node.datasetId, pipeline_node_id: node.id, a: q.a, rank_path: q.rank_path, group_path: q.group_path, items, ...figures, discordant: figures.discordant.slice(0, 200) };
}
