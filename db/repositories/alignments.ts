/** Alignments (issue 39): stored as lib/align computed them; lib/align decides what they mean. */
import "server-only";
import { rawRows, rawRun } from "../store";
import { jsonColumn } from "./json-fields";

export type AlignmentRow = {
  id: number;
  userId: string;
  datasetId: number;
  pipelineNodeId: number;
  status: "pending" | "processing" | "completed" | "failed" | "cancelled";
  params: Record<string, unknown>;
  report: Record<string, unknown> | null;
  usage: Record<string, unknown> | null;
  total: number;
  done: number;
  error: string | null;
  createdAt: string;
  finishedAt: string | null;
};

type RawAlignment = {
  id: number; user_id: string; dataset_id: number; pipeline_node_id: number; status: AlignmentRow["status"]; params: unknown; report: unknown; usage: unknown;
  total: number; done: number; error: string | null; created_at: string; finished_at: string | null;
};

const json = jsonColumn;

const toAlignment = (r: RawAlignment): AlignmentRow => ({
  id: Number(r.id), userId: r.user_id, datasetId: Number(r.dataset_id), pipelineNodeId: Number(r.pipeline_node_id), status: r.status,
  params: json(r.params) ?? {}, report: json(r.report), usage: json(r.usage), total: Number(r.total), done: Number(r.done), error: r.error,
  createdAt: r.created_at, finishedAt: r.finished_at,
});

export async function insertAlignment(v: Pick<AlignmentRow, "userId" | "datasetId" | "pipelineNodeId" | "params" | "report" | "total">, leaseUntil: string): Promise<AlignmentRow> {
  const rows = await rawRows<RawAlignment>(
    "insert into alignments (user_id, dataset_id, pipeline_node_id, status, params, report, total, lease_until) values (?, ?, ?, 'pending', ?, ?, ?, ?) returning *",
    [v.userId, v.datasetId, v.pipelineNodeId, JSON.stringify(v.params), JSON.stringify(v.report), v.total, leaseUntil],
  );
  return toAlignment(rows[0]);
}

export async function getAlignmentRow(id: number): Promise<AlignmentRow | undefined> {
  const rows = await rawRows<RawAlignment>("select * from alignments where id = ?", [id]);
  return rows[0] && toAlignment(rows[0]);
}

/** A metric's alignments, newest first. */
export async function listAlignmentRows(pipelineNodeId: number): Promise<AlignmentRow[]> {
  return (await rawRows<RawAlignment>("select * from alignments where pipeline_node_id = ? order by id desc limit 50", [pipelineNodeId])).map(toAlignment);
}

/** Write an alignment's progress and figures while it is not ended (an ended one is never rewritten). */
export async function saveAlignmentState(
  id: number,
  v: { status: AlignmentRow["status"]; done: number; total: number; report: unknown; usage: unknown; error?: string | null; finishedAt?: string },
): Promise<void> {
  await rawRun(
    `update alignments set status = ?, done = ?, total = ?, report = ?, usage = ?, error = coalesce(?, error), finished_at = coalesce(?, finished_at)
     where id = ? and status in ('pending', 'processing')`,
    [v.status, v.done, v.total, JSON.stringify(v.report), JSON.stringify(v.usage), v.error ?? null, v.finishedAt ?? null, id],
  );
}

/** Record on a completed alignment which candidate was promoted to which prompt version (its report keeps the rest). */
export async function recordPromotion(id: number, promoted: { strategy: string; version: number; at: string }): Promise<void> {
  const row = await getAlignmentRow(id);
  if (!row) return;
  const report = { ...(row.report ?? {}), promoted: [...(((row.report ?? {}) as { promoted?: unknown[] }).promoted ?? []), promoted] };
  await rawRun("update alignments set report = ? where id = ?", [JSON.stringify(report), id]);
}

/** Alignments left pending or processing by a server that stopped: ended as failed (SQLite, at start-up). */
export async function failOrphanedAlignments(message: string, now: string): Promise<number> {
  return rawRun("update alignments set status = 'failed', error = ?, finished_at = ? where status in ('pending', 'processing')", [message, now]);
}

/** Extend the lease of an alignment still being worked; false when it has ended (cancelled or swept by any process). */
export async function renewAlignmentLease(id: number, until: string): Promise<boolean> {
  return (await rawRun("update alignments set lease_until = ? where id = ? and status in ('pending', 'processing')", [until, id])) > 0;
}

/** End an alignment still pending or processing as cancelled, with `message`; false when it had already ended. */
export async function cancelAlignmentRow(id: number, message: string, now: string): Promise<boolean> {
  return (await rawRun("update alignments set status = 'cancelled', error = ?, finished_at = ? where id = ? and status in ('pending', 'processing')", [message, now, id])) > 0;
}

/** End as failed, with `message`, the unfinished alignments whose lease ran out before `now` (their process died); their ids. */
export async function failExpiredAlignments(now: string, message: string): Promise<number[]> {
  const rows = await rawRows<{ id: number }>(
    "update alignments set status = 'failed', error = ?, finished_at = ? where status in ('pending', 'processing') and lease_until is not null and lease_until < ? returning id",
    [message, now, now],
  );
  return rows.map((r) => Number(r.id));
}
