/**
 * The bulk insert behind an import: one SQLite transaction, three prepared statements reused for every
 * row, so a 10,000-conversation file costs one commit instead of a round-trip per row. Nothing here
 * validates; lib/import hands over conversations that already passed every stage.
 */
import "server-only";
import type { MessageRole } from "../schema";
import { first, lockRow, raw, rawExec, rawRows, rawRun, transaction, type Step } from "../store";

export type BulkStep = {
  thinking: string | null;
  toolCall: unknown;
  toolResult: unknown;
  outputContent: string | null;
  outputStructured: unknown;
  modelName: string | null;
  agentName: string | null;
};
export type BulkMessage = { role: MessageRole; content: string | null; meta: unknown; steps: BulkStep[] };
export type BulkConversation = {
  name: string | null;
  description: string | null;
  meta: unknown;
  agents: unknown;
  messages: BulkMessage[];
};

export type BulkTarget = { datasetId: number } | { create: { name: string; description: string | null; userId: string } };

export type BulkResult =
  | { ok: true; datasetId: number; created: boolean; conversations: number; messages: number; steps: number; at: string }
  | { ok: false; reason: "dataset_not_found" };

/** JSON columns hold exactly what was given; absent and null are both stored as NULL. */
const jsonText = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));

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

/** Insert `rows` into `table`, the new ids in row order (each store its fastest way: db/dialect). */
function* insertMany(table: string, columns: string[], rows: Iterable<unknown[]>): Generator<Step, number[], unknown> {
  return (yield { kind: "insertRows", table, columns, rows }) as number[];
}

/**
 * Insert every conversation, message and step, creating the dataset first when asked; all or nothing,
 * in one transaction (multi-row INSERTs on PostgreSQL, one prepared INSERT per row on SQLite). The
 * dataset row is locked first, so two imports into one dataset number their conversations one after
 * the other. With `idempotency`, the outcome `respond` builds is stored in the same transaction, so a
 * dataset never exists without the record that a retry with the same key must get it back.
 */
export async function insertConversationsBulk(
  target: BulkTarget,
  conversations: BulkConversation[],
  idempotency?: { scope: IdempotencyScope; respond: (result: Extract<BulkResult, { ok: true }>) => { status: number; body: unknown } },
): Promise<BulkResult> {
  const now = new Date().toISOString();
  try {
    return await transaction(function* () {
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
      // A second import into a dataset continues its order instead of colliding with it.
      const [{ next: offset }] = yield* raw<{ next: number }>("select coalesce(max(position) + 1, 0) as next from conversations where dataset_id = ?", [datasetId]);
      // Each row is built as it is inserted (generators, read by the store one row or one statement at
      // a time): holding every message and step row with its JSON texts at once cost ~20 MB of peak
      // memory on a 10 MB file.
      const conversationIds = yield* insertMany(
        "conversations",
        ["dataset_id", "position", "name", "description", "meta", "agents", "created_at"],
        (function* () {
          for (let ci = 0; ci < conversations.length; ci++) {
            const c = conversations[ci];
            yield [datasetId, Number(offset) + ci, c.name, c.description, jsonText(c.meta), jsonText(c.agents), now];
          }
        })(),
      );
      const messageIds = yield* insertMany(
        "messages",
        ["conversation_id", "dataset_id", "position", "role", "content", "meta", "created_at"],
        (function* () {
          for (let ci = 0; ci < conversations.length; ci++) {
            const messages = conversations[ci].messages;
            for (let mi = 0; mi < messages.length; mi++) {
              const m = messages[mi];
              yield [conversationIds[ci], datasetId, mi, m.role, m.content, jsonText(m.meta), now];
            }
          }
        })(),
      );
      const stepIds = yield* insertMany(
        "steps",
        ["message_id", "conversation_id", "dataset_id", "position", "thinking", "tool_call", "tool_result", "output_content", "output_structured", "model_name", "agent_name", "created_at"],
        (function* () {
          let m = 0;
          for (let ci = 0; ci < conversations.length; ci++) {
            for (const msg of conversations[ci].messages) {
              const messageId = messageIds[m++];
              for (let si = 0; si < msg.steps.length; si++) {
                const s = msg.steps[si];
                yield [
                  messageId, conversationIds[ci], datasetId, si, s.thinking, jsonText(s.toolCall), jsonText(s.toolResult), s.outputContent,
                  jsonText(s.outputStructured), s.modelName, s.agentName, now,
                ];
              }
            }
          }
        })(),
      );
      const result = { ok: true as const, datasetId, created: "create" in target, conversations: conversations.length, messages: messageIds.length, steps: stepIds.length, at: now };
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
