/** Targets as the API shows them (header values never leave the server), and their checks. */
import "server-only";
import * as repo from "@/db/repositories/targets";
import { notFound } from "@/lib/errors";
import type { CreateTargetInput, Target } from "@/lib/schemas/targets";

export { callTarget, TargetError, type TargetReply, type Turn, type DeclaredTool } from "./clients";

export function toTargetWire(t: repo.TargetRow): Target {
  return {
    id: t.id,
    name: t.name,
    kind: t.kind,
    url: t.url,
    model: t.model,
    header_names: Object.keys(t.headers ?? {}),
    request_template: t.requestTemplate,
    reply_path: t.replyPath,
    steps_path: t.stepsPath,
    max_concurrency: t.maxConcurrency,
    timeout_ms: t.timeoutMs,
    user_id: t.userId,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
  };
}

const values = (b: CreateTargetInput) => ({
  name: b.name,
  kind: b.kind,
  url: b.url,
  model: b.model ?? null,
  headers: b.headers ?? null,
  requestTemplate: b.request_template ?? null,
  replyPath: b.reply_path ?? null,
  stepsPath: b.steps_path ?? null,
  maxConcurrency: b.max_concurrency ?? 16,
  timeoutMs: b.timeout_ms ?? 60_000,
});

export async function createTarget(body: CreateTargetInput, userId: string): Promise<Target> {
  return toTargetWire(await repo.insertTarget({ ...values(body), userId }));
}

export async function getTargetRow(id: number): Promise<repo.TargetRow> {
  const found = await repo.getTarget(id);
  if (!found) throw notFound("Target", id);
  return found;
}

export async function listTargets(): Promise<Target[]> {
  return (await repo.listTargets()).map(toTargetWire);
}

/** A change merged over the stored target, checked as a whole as a new one is. */
export async function updateTarget(id: number, patch: Partial<CreateTargetInput>, check: (merged: unknown) => CreateTargetInput): Promise<Target> {
  const t = await getTargetRow(id);
  const merged = check({
    name: t.name, kind: t.kind, url: t.url, model: t.model, headers: t.headers ?? undefined, request_template: t.requestTemplate, reply_path: t.replyPath,
    steps_path: t.stepsPath, max_concurrency: t.maxConcurrency, timeout_ms: t.timeoutMs, ...patch,
  });
  const updated = await repo.updateTarget(id, values(merged));
  if (!updated) throw notFound("Target", id);
  return toTargetWire(updated);
}

export async function deleteTarget(id: number): Promise<void> {
  if (!(await repo.deleteTarget(id))) throw notFound("Target", id);
}
