/**
 * The structural reader: the mapping inferred from the shape of a file no adapter knows, applied through the
 * ordinary mapping path. Units on inferMapping + applyMapping (checkUpload with the mapping), and through the
 * create-and-import route: the refusal offers the inferred mapping (checked), and importing with it keeps
 * the text and every call.
 */
import { describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as conversationsRoute from "@/app/api/datasets/[id]/conversations/route";
import * as conversationRoute from "@/app/api/conversations/[id]/route";
import { checkUpload } from "../index";
import { parseUpload } from "../parse";
import { inferMapping } from "./infer";
import { measureStructural } from "./measure";

const encode = (text: string) => new TextEncoder().encode(text);
function infer(text: string) {
  const parsed = parseUpload(text);
  if (!parsed.ok) throw new Error("does not parse");
  return inferMapping(parsed);
}
function read(text: string) {
  const mapping = infer(text);
  if (!mapping) throw new Error("nothing inferred");
  const r = checkUpload(encode(text), { maxBytes: 10_000_000, mapping });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r;
}
type Step = { thinking: string | null; toolCall: Record<string, unknown> | null; toolResult: unknown; outputContent: string | null };

/** An agent log under names no adapter knows: a nested list, `actor`/`said`, calls as `{tool, input}` … */
const agentRuns = {
  export_version: 3,
  runs: [
    {
      run_key: "r-1",
      score: 0.5,
      log: {
        entries: [
          { actor: "human", said: "What is the weather in Oslo?" },
          { actor: "ai", said: "", reasoning: "I should look it up.", invocations: [{ id: "c1", name: "weather", arguments: '{"city": "Oslo"}' }] },
          { actor: "tool", said: '{"temp": -3}', tool_call_id: "c1" },
          { actor: "ai", said: "It is -3 °C in Oslo." },
        ],
      },
    },
    { run_key: "r-2", score: 1, log: { entries: [{ actor: "human", said: "Hi" }, { actor: "ai", said: "Hello!" }] } },
  ],
};

describe("the structural reader", () => {
  it("finds the messages at any depth and under any names, decodes JSON arguments, pairs results by id, keeps reasoning", () => {
    const text = JSON.stringify(agentRuns);
    expect(infer(text)).toMatchObject({
      conversations: "runs",
      messages: "log.entries",
      role: "actor",
      content: "said",
      roles: { human: "user", ai: "assistant" },
      tool_calls: "invocations",
      thinking: "reasoning",
      tool_call_id: "tool_call_id",
      name: "run_key",
    });
    const r = read(text);
    expect(r.conversations).toHaveLength(2);
    const [first] = r.conversations;
    expect(first.name).toBe("r-1");
    expect(first.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    const steps = first.messages[1].steps as Step[];
    expect(steps.map((s) => (s.thinking ? "thinking" : s.toolCall ? "call" : s.toolResult !== null ? "result" : "output"))).toEqual(["thinking", "call", "result", "output"]);
    expect(steps[1].toolCall).toEqual({ name: "weather", arguments: { city: "Oslo" }, id: "c1" });
    expect(steps[2].toolResult).toEqual({ temp: -3 });
    expect(first.meta).toMatchObject({ score: 0.5, file: { export_version: 3 } });
  });

  it("groups JSON Lines of single messages by the session they share, and reads calls written as records of their own", () => {
    const lines = [
      { session_key: "s1", at: 1, item: { role: "user", text: "List files" } },
      { session_key: "s1", at: 2, item: { kind: "call", name: "shell", arguments: '{"cmd": "ls"}', call_id: "k1" } },
      { session_key: "s2", at: 3, item: { role: "user", text: "Hello" } },
      { session_key: "s1", at: 4, item: { kind: "call_result", call_id: "k1", output: "a.txt" } },
      { session_key: "s1", at: 5, item: { role: "assistant", text: "One file: a.txt" } },
      { session_key: "s2", at: 6, item: { role: "assistant", text: "Hi!" } },
    ];
    const text = lines.map((l) => JSON.stringify(l)).join("\n");
    expect(infer(text)).toMatchObject({ group_by: "session_key", messages: "item", role: "role", content: "text" });
    const r = read(text);
    expect(r.conversations.map((c) => c.name)).toEqual(["s1", "s2"]);
    const s1 = r.conversations[0];
    expect(s1.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "List files"],
      ["assistant", "One file: a.txt"],
    ]);
    const steps = s1.messages[1].steps as Step[];
    expect(steps[0].toolCall).toEqual({ name: "shell", arguments: { cmd: "ls" }, id: "k1" });
    expect(steps[1].toolResult).toBe("a.txt");
  });

  it("finds calls held deeper in a field (the model response an event carries), each call once though written twice", () => {
    const response = { choices: [{ message: { content: "", tool_calls: [{ id: "t1", function: { name: "ls", arguments: '{"path": "."}' } }, { id: "t2", function: { name: "cat", arguments: '{"path": "a"}' } }] } }] };
    const events = [
      { source: "user", content: "Look around" },
      { source: "agent", note: "ls", tool_call_metadata: { tool_call_id: "t1", model_response: response } },
      { source: "agent", note: "cat", tool_call_metadata: { tool_call_id: "t2", model_response: response } },
      { source: "environment", content: "a.txt", tool_call_metadata: { tool_call_id: "t1" } },
    ];
    const text = JSON.stringify({ history: events });
    expect(infer(text)).toMatchObject({ messages: "history", role: "source", content: "content", tool_calls: "tool_call_metadata" });
    const r = read(text);
    const calls = r.conversations[0].messages.flatMap((m) => (m.steps as Step[]).filter((st) => st.toolCall).map((st) => st.toolCall?.id));
    expect(calls).toEqual(["t1", "t2"]);
  });

  it("infers nothing from a file without role-like and content-like fields", () => {
    expect(infer(JSON.stringify([{ question_id: 1, turns: ["a", "b"] }]))).toBeUndefined();
  });

  it("the measure: text kept and calls found for a file it reads, and why for one it does not", () => {
    const m = measureStructural(encode(JSON.stringify(agentRuns)));
    expect(m).toMatchObject({ imported: true, callsInFile: 1, callsStored: 1, passes: true });
    expect(m.textKept).toBeGreaterThanOrEqual(0.99);
    expect(measureStructural(encode("[1, 2]"))).toMatchObject({ imported: false, passes: false, reason: expect.stringMatching(/role-like/) });
  });

  it("through the API: the refusal offers the inferred mapping, and importing with it stores the calls and their results", async () => {
    const text = JSON.stringify(agentRuns);
    const refused = await upload(createAndImport.POST, "/api/datasets/import", { file: text, fields: { name: "runs" } });
    expect(refused.status).toBe(422);
    const mapping = refused.json.llm_feedback.suggested_mapping;
    // No rename fixes this file, so the import page opens the mapping editor with this mapping (not the rename fix).
    expect(refused.json.llm_feedback.suggested_transformation).toBeNull();
    expect(mapping).toMatchObject({ conversations: "runs", messages: "log.entries", tool_calls: "invocations", tool_call_id: "tool_call_id" });
    const imported = await upload(createAndImport.POST, "/api/datasets/import", { file: text, fields: { name: "runs", mapping: JSON.stringify(mapping) } });
    expect(imported.status).toBe(201);
    expect(imported.json).toMatchObject({ format: "mapping", conversations_imported: 2, not_imported: [] });
    const id = imported.json.dataset_id as number;
    const list = await call(conversationsRoute.GET, "GET", `/api/datasets/${id}/conversations`, { params: { id } });
    const first = (list.json as Array<{ id: number; name: string }>).find((c) => c.name === "r-1") as { id: number };
    const conv = (await call(conversationRoute.GET, "GET", `/api/conversations/${first.id}`, { params: { id: first.id } })).json;
    const steps = conv.messages[1].steps as Array<{ tool_call: unknown; tool_result: unknown }>;
    expect(steps.filter((s) => s.tool_call)).toEqual([expect.objectContaining({ tool_call: { name: "weather", arguments: { city: "Oslo" }, id: "c1" } })]);
    expect(steps.filter((s) => s.tool_result !== null)).toEqual([expect.objectContaining({ tool_result: { temp: -3 } })]);
  });

  it("a log whose few messages sit among many event records (token counts, contexts, calls of their own) still has its role field", () => {
    const lines: unknown[] = [{ type: "meta", payload: { cwd: "/repo", version: "1.0" } }, { type: "item", payload: { type: "message", role: "user", content: "List the files." } }];
    for (let i = 0; i < 12; i++) {
      lines.push({ type: "event", payload: { type: "token_count", total: 100 + i } });
      lines.push({ type: "item", payload: { type: "function_call", name: "shell", arguments: `{"cmd": "ls ${i}"}`, call_id: `c${i}` } });
      lines.push({ type: "item", payload: { type: "function_call_output", call_id: `c${i}`, output: `file${i}.txt` } });
    }
    lines.push({ type: "item", payload: { type: "message", role: "user", content: "Thanks." } });
    const text = lines.map((l) => JSON.stringify(l)).join("\n");
    expect(infer(text)).toMatchObject({ messages: "payload", role: "role", group_by: "" });
    const r = read(text);
    const steps = r.conversations[0].messages.flatMap((m) => m.steps as Step[]);
    expect(steps.filter((s) => s.toolCall)).toHaveLength(12);
    expect(steps.filter((s) => s.toolResult !== null)).toHaveLength(12);
  });
});
