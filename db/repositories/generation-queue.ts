/**
 * The generations' queue, kept on their rows so it works the same on both stores: a process claims a
 * pending generation (or one whose claim ran out: its process died) by one conditional update, holds it
 * with a lease it renews, writes progress only while the claim is its own, and gives it back at shutdown.
 * Two processes that pick the same row race on the update; exactly one changes it.
 */
import "server-only";
import { lockRow, placeholders, raw, rawRows, rawRun } from "../store";
import { toGeneration, type GenerationRow, type RawGeneration } from "./targets";

const active = "status in ('pending', 'processing')";

/** Claim one generation no live process holds (oldest first), counting an attempt; undefined when there is none. */
export async function claimGeneration(owner: string, now: string, leaseUntil: string, maxAttempts: number): Promise<GenerationRow | undefined> {
  const free = `${active} and (claimed_by is null or lease_until < ?) and attempts < ?`;
  const candidates = await rawRows<{ id: number }>(`select id from generations where ${free} order by id limit 5`, [now, maxAttempts]);
  for (const { id } of candidates) {
    const rows = await rawRows<RawGeneration>(
      `update generations set claimed_by = ?, lease_until = ?, attempts = attempts + 1, status = 'processing', started_at = coalesce(started_at, ?)
       where id = ? and ${free} returning *`,
      [owner, leaseUntil, now, Number(id), now, maxAttempts],
    );
    if (rows[0]) return toGeneration(rows[0]);
  }
  return undefined;
}

/**
 * Generations whose claim ran out `maxAttempts` times (each time their process stopped without giving
 * them back): failed with the reason, their conversations so far kept. Returns their ids.
 */
export async function failExhaustedGenerations(now: string, maxAttempts: number, message: string): Promise<number[]> {
  const rows = await rawRows<{ id: number }>(
    `update generations set status = 'failed', error = ?, finished_at = ?, claimed_by = null, lease_until = null
     where ${active} and (claimed_by is null or lease_until < ?) and attempts >= ? returning id`,
    [message, now, now, maxAttempts],
  );
  return rows.map((r) => Number(r.id));
}

/** Renew the lease of generations this process holds; the ids it still holds (a cancelled or lost one is not among them). */
export async function renewGenerationLeases(owner: string, ids: number[], leaseUntil: string): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await rawRows<{ id: number }>(
    `update generations set lease_until = ? where claimed_by = ? and status = 'processing' and id in (${placeholders(ids.length)}) returning id`,
    [leaseUntil, owner, ...ids],
  );
  return new Set(rows.map((r) => Number(r.id)));
}

/** Give a generation back (shutdown): another process, or this one after its restart, resumes it at once; the attempt is not counted. */
export async function releaseGeneration(id: number, owner: string): Promise<void> {
  await rawRun("update generations set claimed_by = null, lease_until = null, attempts = case when attempts > 0 then attempts - 1 else 0 end where id = ? and claimed_by = ?", [id, owner]);
}

/** At a single-process store's start-up: every claim is of a process that is gone, so its generations are free at once. */
export async function releaseDeadClaims(owner: string): Promise<number> {
  return rawRun(`update generations set claimed_by = null, lease_until = null where ${active} and claimed_by is not null and claimed_by <> ?`, [owner]);
}

export type GenerationProgress = { completed: number; failed: number; usage: unknown; stopReasons: unknown };

/** Progress of a generation this process holds (nothing when the claim is not its own any more, or it ended). */
export async function saveGenerationProgress(id: number, owner: string, p: GenerationProgress): Promise<boolean> {
  const n = await rawRun(`update generations set completed = ?, failed = ?, usage = ?, stop_reasons = ? where id = ? and claimed_by = ? and status = 'processing'`, [
    p.completed, p.failed, JSON.stringify(p.usage), JSON.stringify(p.stopReasons), id, owner,
  ]);
  return n > 0;
}

/**
 * The end of a generation this process holds: its counts, and its status unless it was already ended
 * (a cancel from any process writes `cancelled` first; the counts the worker had then still land).
 */
export async function finishGeneration(id: number, owner: string, p: GenerationProgress & { status: GenerationRow["status"]; error: string | null; finishedAt: string }): Promise<void> {
  await rawRun(
    `update generations set completed = ?, failed = ?, usage = ?, stop_reasons = ?, claimed_by = null, lease_until = null,
       status = case when ${active} then ? else status end,
       error = case when ${active} then ? else error end,
       finished_at = coalesce(finished_at, ?)
     where id = ? and claimed_by = ?`,
    [p.completed, p.failed, JSON.stringify(p.usage), JSON.stringify(p.stopReasons), p.status, p.error, p.finishedAt, id, owner],
  );
}

/** End a generation from outside its worker (a cancel, or it could not start); the row as it is after, undefined when it was already final. */
export async function endGenerationRow(id: number, status: "cancelled" | "failed", error: string, now: string): Promise<GenerationRow | undefined> {
  const rows = await rawRows<RawGeneration>(`update generations set status = ?, error = ?, finished_at = ? where id = ? and ${active} returning *`, [status, error, now, id]);
  return rows[0] && toGeneration(rows[0]);
}

export type WrittenConversation = { id: number; sourceConversationId: number | null; repeat: number | null; stopReason: string | null; error: string | null };

const metaOf = (v: unknown): Record<string, unknown> => {
  const m = typeof v === "string" ? (JSON.parse(v) as unknown) : v;
  return m && typeof m === "object" && !Array.isArray(m) ? (m as Record<string, unknown>) : {};
};

/** The conversations a generation wrote to its dataset so far (after `afterId`), in the order written. */
export async function writtenConversations(datasetId: number, afterId = 0): Promise<WrittenConversation[]> {
  const rows = await rawRows<{ id: number; meta: unknown }>("select id, meta from conversations where dataset_id = ? and id > ? order by id", [datasetId, afterId]);
  return rows.map((r) => {
    const m = metaOf(r.meta);
    const num = (v: unknown) => (typeof v === "number" ? v : null);
    return { id: Number(r.id), sourceConversationId: num(m.source_conversation_id), repeat: num(m.repeat), stopReason: typeof m.stop_reason === "string" ? m.stop_reason : null, error: typeof m.error === "string" ? m.error : null };
  });
}

/**
 * Write a generated conversation only while this process holds the generation and it is still running:
 * a conversation finished just after a cancel, or by a process that lost its claim, is not added.
 * `write` runs inside the transaction, under the new dataset's row lock (it numbers the conversation next).
 */
export function* whileHeld(id: number, datasetId: number, owner: string) {
  yield* lockRow("datasets", datasetId);
  const held = yield* raw<{ id: number }>("select id from generations where id = ? and claimed_by = ? and status = 'processing'", [id, owner]);
  return held.length > 0;
}
