/**
 * The bulk insert behind an import: one SQLite transaction, three prepared statements reused for every
 * row, so a 10,000-conversation file costs one commit instead of a round-trip per row. Nothing here
 * validates; lib/import hands over conversations that already passed every stage.
 */
import "server-only";
import type { Conversation } from "@/lib/conversation";
import { bulkTransaction, first, lockRow, raw, rawExec, rawRows, rawRun } from "../store";
import { writeConversations } from "./conversation-writes";

export type BulkTarget = { datasetId: number } | { create: { name: string; description: string | null; userId: string } };

export type BulkResult =
  | { ok: true; datasetId: number; created: boolean; conversations: number; messages: number; steps: number; at: string }
  | { ok: false; reason: "dataset_not_found" };

class DatasetMissing extends Error {}

/** An import's `Idempotency-Key`, where it was used, and what the request was (sha256 of file and fields). */
export type IdempotencyScope = { userId: string; scope: string; key: string; fingerprint: string };
export type StoredOutcome = { fingerprint: string; status: number; body: unknown };

/** Keys are kept this long; older ones are forgotten on the next lookup. */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** The first outcome stored for this key, if any (keys older than a day are forgotten first). */
export async function findImportOutcome(scope: Omit<IdempotencyScope, "fingerprint">): Promise<StoredOutcome | undefined> {
  await rawRun("delete from import_idempotency_keys where created_at < ?", [new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString()]);
  const row = first(
    await rawRows<{ fingerprint: string; status: number; body: string }>(
      "select fingerprint, status, body from import_idempotency_keys where user_id = ? and scope = ? and key = ?",
      [scope.userId, scope.scope, scope.key],
    ),
  );
  return row ? { fingerprint: row.fingerprint, status: row.status, body: JSON.parse(row.body) as unknown } : undefined;
}

/** Store an outcome for a key; the first one stored wins. */
export async function saveImportOutcome(scope: IdempotencyScope, status: number, body: unknown): Promise<void> {
  await rawRun(saveOutcomeSql, outcomeParams(scope, status, body));
}

const saveOutcomeSql =
  "insert into import_idempotency_keys (user_id, scope, key, fingerprint, status, body, created_at) values (?, ?, ?, ?, ?, ?, ?) on conflict do nothing";
const outcomeParams = (scope: IdempotencyScope, status: number, body: unknown) =>
  [scope.userId, scope.scope, scope.key, scope.fingerprint, status, JSON.stringify(body), new Date().toISOString()] as const;

/**
 * Insert every conversation, message and step, creating the dataset first when asked; all or nothing,
 * in one transaction (multi-row INSERTs on PostgreSQL, one prepared INSERT per row on SQLite). The
 * dataset row is locked first, so two imports into one dataset number their conversations one after
 * the other. With `idempotency`, the outcome `respond` builds is stored in the same transaction, so a
 * dataset never exists without the record that a retry with the same key must get it back.
 */
export async function insertConversationsBulk(
  target: BulkTarget,
  conversations: Conversation[],
  idempotency?: { scope: IdempotencyScope; respond: (result: Extract<BulkResult, { ok: true }>) => { status: number; body: unknown } },
): Promise<BulkResult> {
  const now = new Date().toISOString();
  try {
    // On SQLite on the write thread (an import can be hundreds of thousands of rows); the loop answers meanwhile.
    return await bulkTransaction(function* () {
      let datasetId: number;
      if ("create" in target) {
        const { name, description, userId } = target.create;
        const [created] = yield* raw<{ id: number }>(
          "insert into datasets (name, description, user_id, created_at, updated_at) values (?, ?, ?, ?, ?) returning id",
          [name, description, userId, now, now],
        );
        datasetId = Number(created.id);
      } else {
        datasetId = target.datasetId;
        // Checked inside the transaction: a dataset deleted meanwhile must not receive orphan rows.
        yield* lockRow("datasets", datasetId);
        if ((yield* raw("select id from datasets where id = ?", [datasetId])).length === 0) throw new DatasetMissing();
        yield* rawExec("update datasets set updated_at = ? where id = ?", [now, datasetId]);
      }
      // The one writer of conversations (conversation-writes.ts), as every new one.
      const written = yield* writeConversations(datasetId, conversations.map((conversation) => ({ conversation })), now);
      const result = { ok: true as const, datasetId, created: "create" in target, conversations: conversations.length, messages: written.messages, steps: written.steps, at: now };
      if (idempotency) {
        const { status, body } = idempotency.respond(result);
        yield* rawExec(saveOutcomeSql, [...outcomeParams(idempotency.scope, status, body)]);
      }
      return result;
    });
  } catch (error) {
    if (error instanceof DatasetMissing) return { ok: false, reason: "dataset_not_found" };
    throw error;
  }
}
