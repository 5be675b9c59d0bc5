/**
 * The one writer of conversations: their rows, their messages' and their steps'. The bulk import
 * (imports.ts) writes new conversations through it, the OTLP ingest (otel.ts) new ones and rebuilt ones.
 * It runs inside the caller's transaction and validates nothing: the callers hand over conversations in
 * the shape of lib/conversation.ts that passed their checks.
 */
import "server-only";
import type { Conversation } from "@/lib/conversation";
import { raw, rawExec, type Step } from "../store";

/** JSON columns hold exactly what was given; absent and null are both stored as NULL. */
const jsonText = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));

/** Insert `rows` into `table`, the new ids in row order (each store its fastest way: db/dialect). */
function* insertMany(table: string, columns: string[], rows: Iterable<unknown[]>): Generator<Step, number[], unknown> {
  return (yield { kind: "insertRows", table, columns, rows }) as number[];
}

export type ConversationWrite = {
  conversation: Conversation;
  /**
   * A stored conversation to rewrite instead of a new one: its row takes the new name, description, meta
   * and agents; its first `keepMessages` messages stay (with their evaluations) and the rest of its
   * `storedMessages` are replaced by the conversation's messages from `keepMessages` on.
   */
  rewrite?: { id: number; keepMessages: number; storedMessages: number };
};

export type WrittenConversations = { conversationIds: number[]; messages: number; steps: number };

/**
 * Write `writes` into dataset `datasetId` in the caller's transaction, each conversation's id in order:
 * new conversations numbered after the dataset's last (the caller holds the dataset's row lock when any
 * is new, so two writers number theirs one after the other), rewritten ones updated in place.
 */
export function* writeConversations(datasetId: number, writes: readonly ConversationWrite[], now: string): Generator<Step, WrittenConversations, unknown> {
  const fresh = writes.filter((w) => !w.rewrite);
  let freshIds: number[] = [];
  if (fresh.length) {
    // A second import into a dataset continues its order instead of colliding with it.
    const [{ next: offset }] = yield* raw<{ next: number }>("select coalesce(max(position) + 1, 0) as next from conversations where dataset_id = ?", [datasetId]);
    // Each row is built as it is inserted (generators, read by the store one row or one statement at a
    // time): holding every message and step row with its JSON texts at once cost ~20 MB of peak memory
    // on a 10 MB file.
    freshIds = yield* insertMany(
      "conversations",
      ["dataset_id", "position", "name", "description", "meta", "agents", "created_at"],
      (function* () {
        for (let ci = 0; ci < fresh.length; ci++) {
          const c = fresh[ci].conversation;
          yield [datasetId, Number(offset) + ci, c.name, c.description, jsonText(c.meta), jsonText(c.agents), now];
        }
      })(),
    );
  }
  let nextFresh = 0;
  const conversationIds = writes.map((w) => w.rewrite?.id ?? freshIds[nextFresh++]);
  for (const { conversation: c, rewrite } of writes) {
    if (!rewrite) continue;
    yield* rawExec("update conversations set name = ?, description = ?, meta = ?, agents = ? where id = ?", [c.name, c.description, jsonText(c.meta), jsonText(c.agents), rewrite.id]);
    if (rewrite.keepMessages < rewrite.storedMessages) yield* rawExec("delete from messages where conversation_id = ? and position >= ?", [rewrite.id, rewrite.keepMessages]);
  }
  const firstNew = (w: ConversationWrite) => w.rewrite?.keepMessages ?? 0;
  const messageIds = yield* insertMany(
    "messages",
    ["conversation_id", "dataset_id", "position", "role", "content", "meta", "created_at"],
    (function* () {
      for (let ci = 0; ci < writes.length; ci++) {
        const messages = writes[ci].conversation.messages;
        for (let mi = firstNew(writes[ci]); mi < messages.length; mi++) {
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
      for (let ci = 0; ci < writes.length; ci++) {
        const messages = writes[ci].conversation.messages;
        for (let mi = firstNew(writes[ci]); mi < messages.length; mi++) {
          const messageId = messageIds[m++];
          const steps = messages[mi].steps;
          for (let si = 0; si < steps.length; si++) {
            const s = steps[si];
            yield [
              messageId, conversationIds[ci], datasetId, si, s.thinking, jsonText(s.toolCall), jsonText(s.toolResult), s.outputContent,
              jsonText(s.outputStructured), s.modelName, s.agentName, now,
            ];
          }
        }
      }
    })(),
  );
  return { conversationIds, messages: messageIds.length, steps: stepIds.length };
}
