/**
 * Targets as the API shows them (header values never leave the server; a URL's credentials only to
 * admins), who may change them (their owner or an admin), and the policy every saved target meets.
 */
import "server-only";
import * as repo from "@/db/repositories/targets";
import type { Caller } from "@/lib/auth";
import { AppError, notFound } from "@/lib/errors";
import type { CreateTargetInput, Target } from "@/lib/schemas/targets";
import { checkTargetPolicy, maskUrl } from "./policy";

export { callTarget, TargetError, type TargetReply, type Turn, type DeclaredTool } from "./clients";

/** The target as `viewer` may see it: the URL's credentials (`user:pass@`, query values) masked unless an admin asks. */
export function toTargetWire(t: repo.TargetRow, viewer: Pick<Caller, "role">): Target {
  return {
    id: t.id,
    name: t.name,
    kind: t.kind,
    url: viewer.role === "admin" ? t.url : maskUrl(t.url),
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

export async function createTarget(body: CreateTargetInput, caller: Caller): Promise<Target> {
  checkTargetPolicy(body);
  return toTargetWire(await repo.insertTarget({ ...values(body), userId: caller.userId }), caller);
}

export async function getTargetRow(id: number): Promise<repo.TargetRow> {
  const found = await repo.getTarget(id);
  if (!found) throw notFound("Target", id);
  return found;
}

export async function listTargets(viewer: Pick<Caller, "role">): Promise<Target[]> {
  return (await repo.listTargets()).map((t) => toTargetWire(t, viewer));
}

/** Only a target's owner or an admin may change or delete it: its stored headers are the owner's secrets. */
function requireOwner(t: repo.TargetRow, caller: Caller, verb: string): void {
  if (caller.role !== "admin" && caller.userId !== t.userId) {
    throw new AppError("forbidden", `Only the target's owner (${t.userId}) or an admin may ${verb} it`);
  }
}

/**
 * A change merged over the stored target, checked as a whole as a new one is. A new URL (another origin,
 * or other credentials in it) drops the stored headers unless the change gives them again: secrets set
 * for one address never go to another.
 */
export async function updateTarget(id: number, patch: Partial<CreateTargetInput>, caller: Caller, check: (merged: unknown) => CreateTargetInput): Promise<Target> {
  const t = await getTargetRow(id);
  requireOwner(t, caller, "change");
  const moved = patch.url !== undefined && patch.url !== t.url;
  const keptHeaders = moved ? undefined : (t.headers ?? undefined);
  const merged = check({
    name: t.name, kind: t.kind, url: t.url, model: t.model, headers: keptHeaders, request_template: t.requestTemplate, reply_path: t.replyPath,
    steps_path: t.stepsPath, max_concurrency: t.maxConcurrency, timeout_ms: t.timeoutMs, ...patch,
  });
  checkTargetPolicy(merged);
  const updated = await repo.updateTarget(id, values(merged));
  if (!updated) throw notFound("Target", id);
  return toTargetWire(updated, caller);
}

export async function deleteTarget(id: number, caller: Caller): Promise<void> {
  requireOwner(await getTargetRow(id), caller, "delete");
  if (!(await repo.deleteTarget(id))) throw notFound("Target", id);
}
