/** Targets and generations (issue 37): stored as they were given; lib/targets and lib/generation decide what they mean. */
import "server-only";
import { rawRows, rawRun } from "../store";
import type { TargetKind } from "@/lib/vocabulary";
import { jsonColumn } from "./json-fields";

export type TargetRow = {
  id: number;
  userId: string;
  name: string;
  kind: TargetKind;
  url: string;
  model: string | null;
  headers: Record<string, string> | null;
  requestTemplate: string | null;
  replyPath: string | null;
  stepsPath: string | null;
  maxConcurrency: number;
  timeoutMs: number;
  createdAt: string;
  updatedAt: string;
};

type RawTarget = {
  id: number; user_id: string; name: string; kind: TargetRow["kind"]; url: string; model: string | null; headers: unknown; request_template: string | null;
  reply_path: string | null; steps_path: string | null; max_concurrency: number; timeout_ms: number; created_at: string; updated_at: string;
};

const json = jsonColumn;

const toTarget = (r: RawTarget): TargetRow => ({
  id: Number(r.id), userId: r.user_id, name: r.name, kind: r.kind, url: r.url, model: r.model, headers: json(r.headers), requestTemplate: r.request_template,
  replyPath: r.reply_path, stepsPath: r.steps_path, maxConcurrency: Number(r.max_concurrency), timeoutMs: Number(r.timeout_ms), createdAt: r.created_at, updatedAt: r.updated_at,
});

export type TargetValues = Omit<TargetRow, "id" | "createdAt" | "updatedAt">;

export async function insertTarget(v: TargetValues): Promise<TargetRow> {
  const rows = await rawRows<RawTarget>(
    `insert into targets (user_id, name, kind, url, model, headers, request_template, reply_path, steps_path, max_concurrency, timeout_ms)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning *`,
    [v.userId, v.name, v.kind, v.url, v.model, v.headers ? JSON.stringify(v.headers) : null, v.requestTemplate, v.replyPath, v.stepsPath, v.maxConcurrency, v.timeoutMs],
  );
  return toTarget(rows[0]);
}

export async function getTarget(id: number): Promise<TargetRow | undefined> {
  const rows = await rawRows<RawTarget>("select * from targets where id = ?", [id]);
  return rows[0] && toTarget(rows[0]);
}

export async function listTargets(): Promise<TargetRow[]> {
  return (await rawRows<RawTarget>("select * from targets order by id")).map(toTarget);
}

export async function updateTarget(id: number, v: Omit<TargetValues, "userId">): Promise<TargetRow | undefined> {
  const rows = await rawRows<RawTarget>(
    `update targets set name = ?, kind = ?, url = ?, model = ?, headers = ?, request_template = ?, reply_path = ?, steps_path = ?, max_concurrency = ?, timeout_ms = ?, updated_at = ?
     where id = ? returning *`,
    [v.name, v.kind, v.url, v.model, v.headers ? JSON.stringify(v.headers) : null, v.requestTemplate, v.replyPath, v.stepsPath, v.maxConcurrency, v.timeoutMs, new Date().toISOString(), id],
  );
  return rows[0] && toTarget(rows[0]);
}

export async function deleteTarget(id: number): Promise<boolean> {
  return (await rawRun("delete from targets where id = ?", [id])) > 0;
}

export type GenerationRow = {
  id: number;
  userId: string;
  sourceDatasetId: number | null;
  datasetId: number;
  targetId: number | null;
  mode: "next_turn" | "replay" | "simulate";
  status: "pending" | "processing" | "completed" | "failed" | "cancelled";
  params: Record<string, unknown>;
  total: number;
  completed: number;
  failed: number;
  usage: Record<string, unknown> | null;
  stopReasons: Record<string, number> | null;
  error: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  sourceConversationIds: number[] | null;
  claimedBy: string | null;
  leaseUntil: string | null;
  attempts: number;
};

export type RawGeneration = {
  id: number; user_id: string; source_dataset_id: number | null; dataset_id: number; target_id: number | null; mode: GenerationRow["mode"]; status: GenerationRow["status"];
  params: unknown; total: number; completed: number; failed: number; usage: unknown; stop_reasons: unknown; error: string | null; created_at: string; started_at: string | null; finished_at: string | null;
  source_conversation_ids: unknown; claimed_by: string | null; lease_until: string | null; attempts: number;
};

export const toGeneration = (r: RawGeneration): GenerationRow => ({
  id: Number(r.id), userId: r.user_id, sourceDatasetId: r.source_dataset_id === null ? null : Number(r.source_dataset_id), datasetId: Number(r.dataset_id),
  targetId: r.target_id === null ? null : Number(r.target_id), mode: r.mode, status: r.status, params: json(r.params) ?? {}, total: Number(r.total), completed: Number(r.completed),
  failed: Number(r.failed), usage: json(r.usage), stopReasons: json(r.stop_reasons), error: r.error, createdAt: r.created_at, startedAt: r.started_at, finishedAt: r.finished_at,
  sourceConversationIds: json<number[]>(r.source_conversation_ids), claimedBy: r.claimed_by, leaseUntil: r.lease_until, attempts: Number(r.attempts ?? 0),
});

export async function insertGeneration(v: Pick<GenerationRow, "userId" | "sourceDatasetId" | "datasetId" | "targetId" | "mode" | "params" | "total"> & { sourceConversationIds: number[] }): Promise<GenerationRow> {
  const rows = await rawRows<RawGeneration>(
    "insert into generations (user_id, source_dataset_id, dataset_id, target_id, mode, status, params, total, source_conversation_ids) values (?, ?, ?, ?, ?, 'pending', ?, ?, ?) returning *",
    [v.userId, v.sourceDatasetId, v.datasetId, v.targetId, v.mode, JSON.stringify(v.params), v.total, JSON.stringify(v.sourceConversationIds)],
  );
  return toGeneration(rows[0]);
}

export async function getGeneration(id: number): Promise<GenerationRow | undefined> {
  const rows = await rawRows<RawGeneration>("select * from generations where id = ?", [id]);
  return rows[0] && toGeneration(rows[0]);
}

/** Generations, newest first: all, or those made from one source dataset; and how many there are. */
export async function listGenerations(opts: { sourceDatasetId?: number; limit: number; offset: number }): Promise<{ items: GenerationRow[]; total: number }> {
  const where = opts.sourceDatasetId === undefined ? "" : "where source_dataset_id = ?";
  const params = opts.sourceDatasetId === undefined ? [] : [opts.sourceDatasetId];
  const rows = await rawRows<RawGeneration>(`select * from generations ${where} order by id desc limit ? offset ?`, [...params, opts.limit, opts.offset]);
  const [{ n }] = await rawRows<{ n: number }>(`select count(*) as n from generations ${where}`, params);
  return { items: rows.map(toGeneration), total: Number(n) };
}

/** A dataset's conversation ids in grid order (all of them, or those of `only` that belong to it). */
export async function sourceConversationIds(datasetId: number, only?: number[]): Promise<number[]> {
  const rows = await rawRows<{ id: number }>("select id from conversations where dataset_id = ? order by position, id", [datasetId]);
  const ids = rows.map((r) => Number(r.id));
  if (!only) return ids;
  const wanted = new Set(only);
  return ids.filter((id) => wanted.has(id));
}
