/**
 * A value stored in another written form than the file's (`25.00` stored as `25`) is listed in the
 * outcome's `not_imported` with its path and a reason, through the import route; the value itself is
 * stored and read back as the number it is. Runs on both stores (TEST_STORE=postgres).
 */
import { describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "./route";
import * as conversationsRoute from "../[id]/conversations/route";
import * as conversationRoute from "../../conversations/[id]/route";

async function importText(text: string, filename = "upload.json") {
  const res = await upload(createAndImport.POST, "/api/datasets/import", { file: text, filename, fields: { name: filename } });
  expect(res.status).toBe(201);
  const id = res.json.dataset_id as number;
  const list = await call(conversationsRoute.GET, "GET", `/api/datasets/${id}/conversations`, { params: { id } });
  const first = (list.json as Array<{ id: number }>)[0];
  const conversation = (await call(conversationRoute.GET, "GET", `/api/conversations/${first.id}`, { params: { id: first.id } })).json;
  return { outcome: res.json, conversation };
}

describe("re-serialised values are listed in not_imported, through the import route", () => {
  it("numbers in meta and in tool arguments sent as JSON text, an integer-like key moved first", async () => {
    const args = '{"amount": 25.00, "fee": 1e2}';
    const text = `[{"reward": 1.0, "meta_note": {"b": "x", "7": "y"}, "messages": [
      {"role": "user", "content": "Pay the bill"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "pay", "arguments": ${JSON.stringify(args)}}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "paid"},
      {"role": "assistant", "content": "Done."}]}]`;
    const { outcome, conversation } = await importText(text);
    expect(outcome).toMatchObject({ format: "openai_chat", conversations_imported: 1 });
    expect(outcome.not_imported).toEqual(
      expect.arrayContaining([
        { path: "[].reward", characters: 3, reason: "re-serialised: 1.0 stored as 1" },
        { path: "[].messages[].tool_calls[].function.arguments.amount", characters: 5, reason: "re-serialised: 25.00 stored as 25" },
        { path: "[].messages[].tool_calls[].function.arguments.fee", characters: 3, reason: "re-serialised: 1e2 stored as 100" },
        { path: "[].meta_note.7", characters: 3, reason: 're-serialised: key "7" stored before the keys written ahead of it (integer-like keys come first)' },
      ]),
    );
    expect(outcome.not_imported).toHaveLength(4);
    // What is stored is the value: the numbers read back as numbers.
    expect(conversation.meta).toMatchObject({ reward: 1, meta_note: { b: "x", "7": "y" } });
    const call0 = conversation.messages.flatMap((m: { steps: Array<{ tool_call: unknown }> }) => m.steps).find((s: { tool_call: unknown }) => s.tool_call);
    expect(call0.tool_call).toMatchObject({ name: "pay", arguments: { amount: 25, fee: 100 } });
  });

  it("a file written in canonical form lists nothing, even with numbers and JSON-looking text in messages", async () => {
    const text = JSON.stringify([{ reward: 0.5, messages: [{ role: "user", content: '{"looks": 1.0}' }, { role: "assistant", content: "Costs 25.00" }] }]);
    const { outcome, conversation } = await importText(text);
    expect(outcome.not_imported).toEqual([]);
    expect(conversation.messages[0].content).toBe('{"looks": 1.0}');
  });

  it("JSON Lines: each line's values under []", async () => {
    const line = (score: string) => `{"score": ${score}, "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]}\n`;
    const { outcome } = await importText(line("0.50") + line("0.25"), "scores.jsonl");
    expect(outcome.not_imported).toEqual([{ path: "[].score", characters: 4, reason: "re-serialised: 0.50 stored as 0.5" }]);
  });
});
