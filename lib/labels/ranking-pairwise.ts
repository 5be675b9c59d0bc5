/**
 * A pairwise judge against human rankings (issue 38.5): for a comparison of sibling replies (pair_by
 * siblings), how often the outcome of each pair — a reply picked in both orders, else a tie — orders the
 * two as people ranked them (`meta.rank`, 0 = best). A tie counts half, as a pointwise judge's equal
 * scores do in lib/agreement's rankingAgreement, so the two figures read side by side.
 */
import "server-only";
import { getComparison, listPairs } from "@/db/repositories/comparisons";
import { wilsonInterval, type EntityRef, type Interval } from "@/lib/agreement";
import { AppError, notFound } from "@/lib/errors";

type Query = { dataset_id: number; pipeline_node_id: number; a: string; rank_path: string; group_path: string };
export type ComparisonRanking = Query & {
  items: number;
  groups: number;
  pairs: number;
  pairwise_accuracy: number | null;
  ties: number;
  pairwise_interval: Interval | null;
  mean_spearman: null;
  spearman_interval: null;
  spearman_undefined: number;
  discordant: Array<{ better: EntityRef; worse: EntityRef; judge_better: number; judge_worse: number }>;
};

/** `ranks`: each message's human rank, by message id. */
export async function comparisonRankingAgreement(q: Query, ranks: Map<number, boolean | number | string>): Promise<ComparisonRanking> {
  const id = Number(q.a.slice("comparison:".length));
  const row = await getComparison(id);
  if (!row) throw notFound("Comparison", id);
  const refuse = (path: string, message: string, detail: string) => {
    throw new AppError("unprocessable", `Invalid query: ${message}`, [{ path, message: detail }]);
  };
  if (row.pairBy !== "siblings") refuse("a", `comparison ${id} pairs by ${row.pairBy}; human ranks order sibling replies, so it must pair by siblings`, "must be a comparison with pair_by siblings");
  if (row.aDatasetId !== q.dataset_id) refuse("a", `comparison ${id} is of dataset ${row.aDatasetId}, not ${q.dataset_id}`, `must be a comparison of dataset ${q.dataset_id}`);
  if (row.pipelineNodeId !== q.pipeline_node_id) refuse("pipeline_node_id", `comparison ${id} was judged by metric ${row.pipelineNodeId}`, `must be ${row.pipelineNodeId}, the comparison's metric`);
  let pairs = 0;
  let concordant = 0;
  let ties = 0;
  const groups = new Set<string>();
  const items = new Set<number>();
  const discordant: ComparisonRanking["discordant"] = [];
  for (const p of await listPairs(id)) {
    if (p.outcome === null || p.aMessageId === null || p.bMessageId === null) continue;
    const [ra, rb] = [ranks.get(p.aMessageId), ranks.get(p.bMessageId)];
    if (typeof ra !== "number" || typeof rb !== "number" || ra === rb) continue;
    pairs++;
    groups.add(p.groupKey ?? "");
    items.add(p.aMessageId).add(p.bMessageId);
    const aBetter = ra < rb;
    const ref = (side: "a" | "b"): EntityRef =>
      side === "a" ? { entity_type: "message", entity_id: p.aMessageId!, conversation_id: p.aConversationId } : { entity_type: "message", entity_id: p.bMessageId!, conversation_id: p.bConversationId };
    if (p.outcome === "tie") {
      concordant += 0.5;
      ties++;
    } else if ((p.outcome === "a") === aBetter) concordant++;
    else discordant.push({ better: ref(aBetter ? "a" : "b"), worse: ref(aBetter ? "b" : "a"), judge_better: 0, judge_worse: 1 });
  }
  return {
    dataset_id: q.dataset_id,
    pipeline_node_id: q.pipeline_node_id,
    a: q.a,
    rank_path: q.rank_path,
    group_path: q.group_path,
    items: items.size,
    groups: groups.size,
    pairs,
    pairwise_accuracy: pairs ? concordant / pairs : null,
    ties,
    pairwise_interval: wilsonInterval(concordant, pairs),
    mean_spearman: null,
    spearman_interval: null,
    spearman_undefined: 0,
    discordant: discordant.slice(0, 200),
  };
}
