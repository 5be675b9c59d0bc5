import { describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "./route";
import * as conversationsRoute from "../[id]/conversations/route";
import * as conversationRoute from "../../conversations/[id]/route";

/** A support-chat export no adapter knows: turns under `dialogue_turns`, `speaker` and `utterance`. */
const file = JSON.stringify([
  {
    ticket: "T-1",
    label: "resolved",
    dialogue_turns: [
      { speaker: "customer", utterance: "My card was charged twice." },
      { speaker: "bot", utterance: "I see two charges; I have refunded one of them." },
    ],
  },
  { ticket: "T-2", label: "escalated", dialogue_turns: [{ speaker: "customer", utterance: "I want a human." }] },
]);

const importWith = (fields: Record<string, string>, text = file) =>
  upload(createAndImport.POST, "/api/datasets/import", { file: text, fields: { name: "support", ...fields } });

async function messagesOf(datasetId: number) {
  const list = await call(conversationsRoute.GET, "GET", `/api/datasets/${datasetId}/conversations`, { params: { id: datasetId } });
  const out = [];
  for (const c of list.json as Array<{ id: number }>) {
    const conv = (await call(conversationRoute.GET, "GET", `/api/conversations/${c.id}`, { params: { id: c.id } })).json;
    out.push({ meta: conv.meta, messages: conv.messages.map((m: { role: string; content: string }) => [m.role, m.content]) });
  }
  return out;
}

describe("the mapping form field", () => {
  it("a file no adapter reads is refused with no format named, one grouped error, and a checked mapping that imports it", async () => {
    const refused = await importWith({});
    expect(refused.status).toBe(422);
    expect(refused.json.format).toBeUndefined();
    expect(refused.json.errors).toEqual([expect.objectContaining({ path: "[0..1].messages", count: 2 })]);
    expect(refused.json.llm_feedback.suggested_mapping).toEqual({
      messages: "dialogue_turns",
      role: "speaker",
      content: "utterance",
      roles: { customer: "user", bot: "assistant" },
    });

    const imported = await importWith({ mapping: JSON.stringify(refused.json.llm_feedback.suggested_mapping) });
    expect(imported.status).toBe(201);
    expect(imported.json).toMatchObject({ format: "mapping", conversations_imported: 2, messages_imported: 3, not_imported: [] });
    expect(await messagesOf(imported.json.dataset_id)).toEqual([
      {
        meta: { ticket: "T-1", label: "resolved" },
        messages: [
          ["user", "My card was charged twice."],
          ["assistant", "I see two charges; I have refunded one of them."],
        ],
      },
      { meta: { ticket: "T-2", label: "escalated" }, messages: [["user", "I want a human."]] },
    ]);
  });

  it("maps steps and chosen meta fields, and refuses a mapping that would store the text nowhere", async () => {
    const agentLog = JSON.stringify({
      runs: [
        {
          run: 1,
          score: 0.5,
          events: [
            { actor: "user", text: "What is 2+2?" },
            { actor: "agent", text: "4", thought: "simple sum", call: { name: "calc", arguments: '{"expr":"2+2"}' } },
          ],
        },
      ],
    });
    const mapping = { conversations: "runs", messages: "events", role: "actor", content: "text", thinking: "thought", tool_calls: "call", roles: { agent: "assistant" }, meta: ["score"] };
    const ok = await importWith({ mapping: JSON.stringify(mapping) }, agentLog);
    expect(ok.status).toBe(201);
    expect(ok.json).toMatchObject({ format: "mapping", steps_imported: 3, not_imported: [] });
    const [conv] = (await call(conversationsRoute.GET, "GET", `/api/datasets/${ok.json.dataset_id}/conversations`, { params: { id: ok.json.dataset_id } })).json;
    const full = (await call(conversationRoute.GET, "GET", `/api/conversations/${conv.id}`, { params: { id: conv.id } })).json;
    expect(full.meta).toEqual({ score: 0.5 });
    expect(full.messages[1].steps.map((s: { thinking: unknown; tool_call: unknown; output_content: unknown }) => s.thinking ?? s.tool_call ?? s.output_content)).toEqual([
      "simple sum",
      { name: "calc", arguments: { expr: "2+2" } },
      "4",
    ]);

    // Content named wrong: every message would be empty — refused with the path of the text, nothing created.
    const wrong = await importWith({ mapping: JSON.stringify({ ...mapping, content: "body" }), get_feedback: "false" }, agentLog);
    expect(wrong.status).toBe(422);
    expect(wrong.json.errors[0].path).toBe("runs[0].events[0].text");
    // Both messages' text: the first whole ("What is 2+2?"), the second's answer ("4"; its steps still stored).
    expect(wrong.json.not_imported).toEqual([{ path: "runs[].events[].text", characters: "What is 2+2?".length + 1 }]);
  });

  it("answers a mapping that is not a valid ImportMapping with 400 in the generic shape", async () => {
    const notJson = await importWith({ mapping: "{messages:" });
    expect(notJson.status).toBe(400);
    expect(notJson.json.error.message).toContain("mapping");
    const missing = await importWith({ mapping: JSON.stringify({ messages: "dialogue_turns", role: "speaker" }) });
    expect(missing.status).toBe(400);
    expect(missing.json.error.message).toContain("content");
  });
});
