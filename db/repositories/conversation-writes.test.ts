// The one writer of conversations (the bulk import and the OTLP ingest both write through it): new
// conversations are numbered after the dataset's last, a rewritten one keeps the rows of the messages
// it keeps (the evaluations of them hang on those ids) and replaces the rest, in one call.
import { describe, expect, it } from "vitest";
import type { Conversation, Step } from "@/lib/conversation";
import { rawRows, transaction } from "../store";
import { writeConversations } from "./conversation-writes";
import { createDataset } from "./datasets";

const step = (thinking: string): Step => ({ thinking, toolCall: { name: "t" }, toolResult: null, outputContent: null, outputStructured: null, modelName: "m", agentName: null });
const conversation = (name: string, texts: string[]): Conversation => ({
  name,
  description: null,
  meta: { name },
  agents: null,
  messages: texts.map((content, i) => ({ role: i % 2 ? "assistant" : "user", content, meta: null, steps: i % 2 ? [step(`${name}:${content}`)] : [] })),
});

const messages = (conversationId: number) =>
  rawRows<{ id: number; position: number; content: string }>("select id, position, content from messages where conversation_id = ? order by position", [conversationId]);

describe("writeConversations", () => {
  it("numbers new conversations after the dataset's last and rewrites a stored one from its first changed message", async () => {
    const dataset = await createDataset({ name: "writer", userId: "u" });
    const now = new Date().toISOString();
    const first = await transaction(() => writeConversations(dataset.id, [{ conversation: conversation("a", ["q1", "a1", "q2", "a2"]) }], now));
    expect(first).toEqual({ conversationIds: [expect.any(Number)], messages: 4, steps: 2 });
    const [a] = first.conversationIds;
    const before = await messages(a);

    // One call: a new conversation, and "a" rewritten keeping its first two messages.
    const second = await transaction(() =>
      writeConversations(
        dataset.id,
        [{ conversation: conversation("b", ["x"]) }, { conversation: conversation("a2", ["q1", "a1", "q2*", "a2*", "q3"]), rewrite: { id: a, keepMessages: 2, storedMessages: 4 } }],
        now,
      ),
    );
    expect(second).toEqual({ conversationIds: [expect.any(Number), a], messages: 4, steps: 1 });
    const conversations = await rawRows<{ id: number; name: string; position: number }>("select id, name, position from conversations where dataset_id = ? order by position", [dataset.id]);
    expect(conversations).toEqual([
      { id: a, name: "a2", position: 0 },
      { id: second.conversationIds[0], name: "b", position: 1 },
    ]);
    const after = await messages(a);
    expect(after.map((m) => [m.position, m.content])).toEqual([
      [0, "q1"],
      [1, "a1"],
      [2, "q2*"],
      [3, "a2*"],
      [4, "q3"],
    ]);
    // The kept messages are the same rows; the replaced ones are new.
    expect(after.slice(0, 2).map((m) => m.id)).toEqual(before.slice(0, 2).map((m) => m.id));
    expect(after.slice(2).some((m) => before.some((b) => b.id === m.id))).toBe(false);
    const steps = await rawRows<{ message_id: number; thinking: string; position: number }>("select message_id, thinking, position from steps where conversation_id = ? order by message_id", [a]);
    expect(steps).toEqual([
      { message_id: after[1].id, thinking: "a:a1", position: 0 },
      { message_id: after[3].id, thinking: "a2:a2*", position: 0 },
    ]);
  });
});
