/** Pairwise comparisons and their pairs (issue 38.5): stored as judged; lib/comparisons decides what they mean. */
import "server-only";
import { placeholders, raw, rawExec, rawRows, rawRun, transaction } from "../store";
import { jsonColumn } from "./json-fields";

export type ComparisonStatus = "pending" | "processing" | "completed" | "failed" | "cancelled";

export type ComparisonRow = {
  id: number;
  userId: string;
  pipelineNodeId: number;
  aSource: string;
  bSource: string | null;
  aDatasetId: number;
  bDatasetId: number | null;
  pairBy: string;
  status: ComparisonStatus;
  params: Record<string, unknown>;
  total: number;
  usage: { judge_calls: number; input_tokens: number; output_tokens: number; cost_usd: number | null } | null;
  error: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
};

export type PairRow = {
  id: number;
  comparisonId: number;
  position: number;
  groupKey: string | null;
  aConversationId: number;
  aMessageId: number | null;
  bConversationId: number;
  bMessageId: number | null;
  verdictAb: "A" | "B" | "tie" | null;
  verdictBa: "A" | "B" | "tie" | null;
  reasoningAb: string | null;
  reasoningBa: string | null;
  outcome: "a" | "b" | "tie" | null;
  error: string | null;
};

type RawComparison = {
  id: number; user_id: string; pipeline_node_id: number; a_source: string; b_source: string | null; a_dataset_id: number; b_dataset_id: number | null;
  pair_by: string; status: ComparisonStatus; params: unknown; total: number; usage: unknown; error: string | null; created_at: string; started_at: string | null; finished_at: string | null;
};
type RawPair = {
  id: number; comparison_id: number; position: number; group_key: string | null; a_conversation_id: number; a_message_id: number | null; b_conversation_id: number; b_message_id: number | null;
  verdict_ab: PairRow["verdictAb"]; verdict_ba: PairRow["verdictBa"]; reasoning_ab: string | null; reasoning_ba: string | null; outcome: PairRow["outcome"]; error: string | null;
};

const json = jsonColumn;
const num = (v: number | null) => (v === null ? null : Number(v));

const toComparison = (r: RawComparison): ComparisonRow => ({
  id: Number(r.id), userId: r.user_id, pipelineNodeId: Number(r.pipeline_node_id), aSource: r.a_source, bSource: r.b_source, aDatasetId: Number(r.a_dataset_id), bDatasetId: num(r.b_dataset_id),
  pairBy: r.pair_by, status: r.status, params: json(r.params) ?? {}, total: Number(r.total), usage: json(r.usage), error: r.error, createdAt: r.created_at, startedAt: r.started_at, finishedAt: r.finished_at,
});
const toPair = (r: RawPair): PairRow => ({
  id: Number(r.id), comparisonId: Number(r.comparison_id), position: Number(r.position), groupKey: r.group_key, aConversationId: Number(r.a_conversation_id), aMessageId: num(r.a_message_id),
  bConversationId: Number(r.b_conversation_id), bMessageId: num(r.b_message_id), verdictAb: r.verdict_ab, verdictBa: r.verdict_ba, reasoningAb: r.reasoning_ab, reasoningBa: r.reasoning_ba, outcome: r.outcome, error: r.error,
});

export type NewPair = Pick<PairRow, "groupKey" | "aConversationId" | "aMessageId" | "bConversationId" | "bMessageId">;

/** A comparison and its pairs (positions 0…n−1), in one transaction. */
export async function insertComparison(
  v: Pick<ComparisonRow, "userId" | "pipelineNodeId" | "aSource" | "bSource" | "aDatasetId" | "bDatasetId" | "pairBy" | "params">,
  pairs: readonly NewPair[],
  leaseUntil: string,
): Promise<ComparisonRow> {
  return transaction(function* () {
    const [row] = yield* raw<RawComparison>(
      `insert into comparisons (user_id, pipeline_node_id, a_source, b_source, a_dataset_id, b_dataset_id, pair_by, status, params, total, lease_until)
       values (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?) returning *`,
      [v.userId, v.pipelineNodeId, v.aSource, v.bSource, v.aDatasetId, v.bDatasetId, v.pairBy, JSON.stringify(v.params), pairs.length, leaseUntil],
    );
    // 500 rows × 7 values a statement: well under either store's limit on parameters.
    for (let start = 0; start < pairs.length; start += 500) {
      const chunk = pairs.slice(start, start + 500);
      yield* rawExec(
        `insert into comparison_pairs (comparison_id, position, group_key, a_conversation_id, a_message_id, b_conversation_id, b_message_id) values ${chunk.map(() => "(?, ?, ?, ?, ?, ?, ?)").join(", ")}`,
        chunk.flatMap((p, i) => [row.id, start + i, p.groupKey, p.aConversationId, p.aMessageId, p.bConversationId, p.bMessageId]),
      );
    }
    return toComparison(row);
  });
}

export async function getComparison(id: number): Promise<ComparisonRow | undefined> {
  const rows = await rawRows<RawComparison>("select * from comparisons where id = ?", [id]);
  return rows[0] && toComparison(rows[0]);
}

export async function getComparisons(ids: readonly number[]): Promise<ComparisonRow[]> {
  if (ids.length === 0) return [];
  const rows = await rawRows<RawComparison>(`select * from comparisons where id in (${placeholders(ids.length)}) order by id`, ids);
  return rows.map(toComparison);
}

export async function listPairs(comparisonId: number): Promise<PairRow[]> {
  return (await rawRows<RawPair>("select * from comparison_pairs where comparison_id = ? order by position", [comparisonId])).map(toPair);
}

/** Save one pair's verdicts (both orders) or its failure. */
export async function savePair(id: number, v: Pick<PairRow, "verdictAb" | "verdictBa" | "reasoningAb" | "reasoningBa" | "outcome" | "error">): Promise<void> {
  await rawRun("update comparison_pairs set verdict_ab = ?, verdict_ba = ?, reasoning_ab = ?, reasoning_ba = ?, outcome = ?, error = ? where id = ?", [
    v.verdictAb, v.verdictBa, v.reasoningAb, v.reasoningBa, v.outcome, v.error, id,
  ]);
}

/** Write a comparison's state (only while it has not ended). */
export async function saveComparisonState(id: number, v: { status: ComparisonStatus; usage: ComparisonRow["usage"]; error?: string | null; startedAt?: string; finishedAt?: string }): Promise<void> {
  await rawRun(
    `update comparisons set status = ?, usage = ?, error = coalesce(?, error), started_at = coalesce(?, started_at), finished_at = coalesce(?, finished_at)
     where id = ? and status in ('pending', 'processing')`,
    [v.status, JSON.stringify(v.usage), v.error ?? null, v.startedAt ?? null, v.finishedAt ?? null, id],
  );
}

/** Extend the lease of a comparison still being worked; false when it has ended (cancelled or swept by any process). */
export async function renewComparisonLease(id: number, until: string): Promise<boolean> {
  return (await rawRun("update comparisons set lease_until = ? where id = ? and status in ('pending', 'processing')", [until, id])) > 0;
}

/** End a comparison still pending or processing as cancelled, with `error`; false when it had already ended. */
export async function cancelComparisonRow(id: number, error: string, finishedAt: string): Promise<boolean> {
  return (await rawRun("update comparisons set status = 'cancelled', error = ?, finished_at = ? where id = ? and status in ('pending', 'processing')", [error, finishedAt, id])) > 0;
}

/** End as failed, with `error`, the unfinished comparisons whose lease ran out before `now` (their process died); their ids. */
export async function failExpiredComparisons(now: string, error: string): Promise<number[]> {
  const rows = await rawRows<{ id: number }>(
    "update comparisons set status = 'failed', error = ?, finished_at = ? where status in ('pending', 'processing') and lease_until is not null and lease_until < ? returning id",
    [error, now, now],
  );
  return rows.map((r) => Number(r.id));
}

/** End every comparison still pending or processing as failed with `error` (a stopped server's); how many. */
export async function failUnfinishedComparisons(error: string, finishedAt: string): Promise<number> {
  return await rawRun("update comparisons set status = 'failed', error = ?, finished_at = ? where status in ('pending', 'processing')", [error, finishedAt]);
}

/** A dataset's conversation ids in grid order. */
export async function datasetConversationIds(datasetId: number): Promise<number[]> {
  return (await rawRows<{ id: number }>("select id from conversations where dataset_id = ? order by position, id", [datasetId])).map((r) => Number(r.id));
}

export type ComparisonSummaryRow = ComparisonRow & { winsA: number; winsB: number; ties: number };

/** The latest comparisons with a dataset on either side (newest first), with their outcome counts. */
export async function listComparisonsOfDataset(datasetId: number, limit: number): Promise<ComparisonSummaryRow[]> {
  const rows = await rawRows<RawComparison & { wins_a: number; wins_b: number; ties: number }>(
    `select c.*,
       (select count(*) from comparison_pairs p where p.comparison_id = c.id and p.outcome = 'a') as wins_a,
       (select count(*) from comparison_pairs p where p.comparison_id = c.id and p.outcome = 'b') as wins_b,
       (select count(*) from comparison_pairs p where p.comparison_id = c.id and p.outcome = 'tie') as ties
     from comparisons c where c.a_dataset_id = ? or c.b_dataset_id = ? order by c.id desc limit ?`,
    [datasetId, datasetId, limit],
  );
  return rows.map((r) => ({ ...toComparison(r), winsA: Number(r.wins_a), winsB: Number(r.wins_b), ties: Number(r.ties) }));
}
