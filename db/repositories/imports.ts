/**
 * The bulk insert behind an import: one SQLite transaction, three prepared statements reused for every
 * row, so a 10,000-conversation file costs one commit instead of a round-trip per row. Nothing here
 * validates; lib/import hands over conversations that already passed every stage.
 */
import "server-only";
import type { MessageRole } from "../schema";
import { getDb } from "../client";
import { first, onPostgres, pgTransaction, rawRows, rawRun, type PgQuery } from "../store";

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

function saveOutcomeNow(scope: IdempotencyScope, status: number, body: unknown): void {
  getDb().$client.prepare(saveOutcomeSql).run(...outcomeParams(scope, status, body));
}

/**
 * Insert every conversation, message and step, creating the dataset first when asked; all or nothing.
 * With `idempotency`, the outcome `respond` builds is stored in the same transaction, so a dataset
 * never exists without the record that a retry with the same key must get it back.
 */
export async function insertConversationsBulk(
  target: BulkTarget,
  conversations: BulkConversation[],
  idempotency?: { scope: IdempotencyScope; respond: (result: Extract<BulkResult, { ok: true }>) => { status: number; body: unknown } },
): Promise<BulkResult> {
  if (onPostgres) return await insertBulkPg(target, conversations, idempotency);
  const sqlite = getDb().$client;
  const now = new Date().toISOString();
  const insertDataset = sqlite.prepare(
    "insert into datasets (name, description, user_id, created_at, updated_at) values (?, ?, ?, ?, ?)",
  );
  const findDataset = sqlite.prepare("select id from datasets where id = ?");
  const nextPosition = sqlite.prepare("select coalesce(max(position) + 1, 0) as next from conversations where dataset_id = ?");
  const touchDataset = sqlite.prepare("update datasets set updated_at = ? where id = ?");
  const insertConversation = sqlite.prepare(
    "insert into conversations (dataset_id, position, name, description, meta, agents, created_at) values (?, ?, ?, ?, ?, ?, ?)",
  );
  const insertMessage = sqlite.prepare(
    "insert into messages (conversation_id, dataset_id, position, role, content, meta, created_at) values (?, ?, ?, ?, ?, ?, ?)",
  );
  const insertStep = sqlite.prepare(
    "insert into steps (message_id, conversation_id, dataset_id, position, thinking, tool_call, tool_result, output_content, output_structured, model_name, agent_name, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );

  const run = sqlite.transaction((): BulkResult => {
    let datasetId: number;
    if ("create" in target) {
      const { name, description, userId } = target.create;
      datasetId = Number(insertDataset.run(name, description, userId, now, now).lastInsertRowid);
    } else {
      datasetId = target.datasetId;
      // Checked inside the transaction: a dataset deleted meanwhile must not receive orphan rows.
      if (!findDataset.get(datasetId)) throw new DatasetMissing();
      touchDataset.run(now, datasetId);
    }
    // A second import into a dataset continues its order instead of colliding with it.
    const offset = (nextPosition.get(datasetId) as { next: number }).next;
    let messages = 0;
    let steps = 0;
    conversations.forEach((c, ci) => {
      const conversationId = Number(
        insertConversation.run(datasetId, offset + ci, c.name, c.description, jsonText(c.meta), jsonText(c.agents), now).lastInsertRowid,
      );
      c.messages.forEach((m, mi) => {
        const messageId = Number(
          insertMessage.run(conversationId, datasetId, mi, m.role, m.content, jsonText(m.meta), now).lastInsertRowid,
        );
        messages++;
        m.steps.forEach((s, si) => {
          insertStep.run(
            messageId,
            conversationId,
            datasetId,
            si,
            s.thinking,
            jsonText(s.toolCall),
            jsonText(s.toolResult),
            s.outputContent,
            jsonText(s.outputStructured),
            s.modelName,
            s.agentName,
            now,
          );
          steps++;
        });
      });
    });
    const result = { ok: true as const, datasetId, created: "create" in target, conversations: conversations.length, messages, steps, at: now };
    if (idempotency) {
      const { status, body } = idempotency.respond(result);
      saveOutcomeNow(idempotency.scope, status, body);
    }
    return result;
  });

  try {
    return run.immediate();
  } catch (error) {
    if (error instanceof DatasetMissing) return { ok: false, reason: "dataset_not_found" };
    throw error;
  }
}

/** Rows per multi-row INSERT on PostgreSQL: 1,000 × 12 parameters stays below its 65,535. */
const PG_ROWS_PER_INSERT = 1000;

/** `insert into <table> (<columns>) values (?,…), …` for `rows` rows, returning the ids in VALUES order. */
async function insertManyPg(query: PgQuery, table: string, columns: string[], rows: unknown[][]): Promise<number[]> {
  const ids: number[] = [];
  for (let start = 0; start < rows.length; start += PG_ROWS_PER_INSERT) {
    const chunk = rows.slice(start, start + PG_ROWS_PER_INSERT);
    const one = `(${columns.map(() => "?").join(", ")})`;
    const returned = await query<{ id: number }>(
      `insert into ${table} (${columns.join(", ")}) values ${chunk.map(() => one).join(", ")} returning id`,
      chunk.flat(),
    );
    // Identity values are drawn in VALUES order; RETURNING's own order is not promised, so sort.
    ids.push(...returned.map((r) => r.id).sort((a, b) => a - b));
  }
  return ids;
}

/**
 * The PostgreSQL import: the same rows in one transaction, written with multi-row INSERTs (one round
 * trip per 1,000 rows instead of one per row). The dataset row is locked first, so two imports into
 * one dataset number their conversations one after the other.
 */
async function insertBulkPg(
  target: BulkTarget,
  conversations: BulkConversation[],
  idempotency?: { scope: IdempotencyScope; respond: (result: Extract<BulkResult, { ok: true }>) => { status: number; body: unknown } },
): Promise<BulkResult> {
  const now = new Date().toISOString();
  try {
    return await pgTransaction(async (query) => {
      let datasetId: number;
      if ("create" in target) {
        const { name, description, userId } = target.create;
        datasetId = (await query<{ id: number }>("insert into datasets (name, description, user_id, created_at, updated_at) values (?, ?, ?, ?, ?) returning id", [name, description, userId, now, now]))[0].id;
      } else {
        datasetId = target.datasetId;
        if ((await query("select id from datasets where id = ? for update", [datasetId])).length === 0) throw new DatasetMissing();
        await query("update datasets set updated_at = ? where id = ?", [now, datasetId]);
      }
      const offset = (await query<{ next: number }>("select coalesce(max(position) + 1, 0) as next from conversations where dataset_id = ?", [datasetId]))[0].next;
      const conversationIds = await insertManyPg(
        query,
        "conversations",
        ["dataset_id", "position", "name", "description", "meta", "agents", "created_at"],
        conversations.map((c, ci) => [datasetId, offset + ci, c.name, c.description, jsonText(c.meta), jsonText(c.agents), now]),
      );
      const messageRows: unknown[][] = [];
      conversations.forEach((c, ci) => c.messages.forEach((m, mi) => messageRows.push([conversationIds[ci], datasetId, mi, m.role, m.content, jsonText(m.meta), now])));
      const messageIds = await insertManyPg(query, "messages", ["conversation_id", "dataset_id", "position", "role", "content", "meta", "created_at"], messageRows);
      const stepRows: unknown[][] = [];
      let m = 0;
      conversations.forEach((c, ci) =>
        c.messages.forEach((msg) => {
          const messageId = messageIds[m++];
          msg.steps.forEach((s, si) =>
            stepRows.push([
              messageId, conversationIds[ci], datasetId, si, s.thinking, jsonText(s.toolCall), jsonText(s.toolResult), s.outputContent,
              jsonText(s.outputStructured), s.modelName, s.agentName, now,
            ]),
          );
        }),
      );
      await insertManyPg(
        query,
        "steps",
        ["message_id", "conversation_id", "dataset_id", "position", "thinking", "tool_call", "tool_result", "output_content", "output_structured", "model_name", "agent_name", "created_at"],
        stepRows,
      );
      const result = { ok: true as const, datasetId, created: "create" in target, conversations: conversations.length, messages: messageRows.length, steps: stepRows.length, at: now };
      if (idempotency) {
        const { status, body } = idempotency.respond(result);
        await query(saveOutcomeSql, [...outcomeParams(idempotency.scope, status, body)]);
      }
      return result;
    });
  } catch (error) {
    if (error instanceof DatasetMissing) return { ok: false, reason: "dataset_not_found" };
    throw error;
  }
}
