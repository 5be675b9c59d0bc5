/**
 * Shapes the structural reader learned from the shared corpus (bench/structure.bench.ts), each in a small file of
 * our own that no adapter knows, through POST /api/datasets/import with no format named: imported in one step,
 * or refused with a checked version 2 mapping that imports it when sent back. Then counted through the API.
 */
import { describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "./route";
import * as conversationsRoute from "../[id]/conversations/route";
import * as conversationRoute from "../../conversations/[id]/route";

type Step = { thinking: string | null; tool_call: { name: string; arguments: unknown; id?: string } | null; tool_result: unknown; output_content: string | null };
type Message = { role: string; content: string | null; meta: Record<string, unknown> | null; steps: Step[] };
type Conversation = { name: string | null; meta: Record<string, unknown> | null; messages: Message[] };

async function importShape(name: string, data: unknown) {
  const file = JSON.stringify(data);
  const first = await upload(createAndImport.POST, "/api/datasets/import", { file, filename: `${name}.json`, fields: { name } });
  if (first.status === 201) return { outcome: first.json, mapping: first.json.mapping };
  expect([415, 422], first.text).toContain(first.status);
  const mapping = first.json.llm_feedback?.suggested_mapping;
  expect(mapping, `no mapping offered for ${name}: ${first.text.slice(0, 400)}`).toBeDefined();
  const second = await upload(createAndImport.POST, "/api/datasets/import", { file, filename: `${name}.json`, fields: { name, mapping: JSON.stringify(mapping) } });
  expect(second.status, second.text).toBe(201);
  return { outcome: second.json, mapping };
}

async function conversationsOf(datasetId: number): Promise<Conversation[]> {
  const list = await call(conversationsRoute.GET, "GET", `/api/datasets/${datasetId}/conversations`, { params: { id: datasetId } });
  const out: Conversation[] = [];
  for (const c of list.json as Array<{ id: number }>) out.push((await call(conversationRoute.GET, "GET", `/api/conversations/${c.id}`, { params: { id: c.id } })).json);
  return out;
}

/** Each call with the result that follows it in its turn. */
const pairs = (c: Conversation) =>
  c.messages.flatMap((m) => m.steps.flatMap((s, i) => (s.tool_call ? [[s.tool_call.name, m.steps.slice(i + 1).find((x) => x.tool_result !== null)?.tool_result ?? null]] : [])));

describe("the structural reader: shapes from the shared corpus", () => {
  it("records told apart by the fields they carry (a question, a scratchpad, actions with their outcome or failure, an answer)", async () => {
    const memory = {
      agent_kind: "solver",
      trace: [
        { question: "What is 17 * 23?" },
        { scratchpad: "Multiply, then check the result.", usage: { tokens: 12 } },
        { turn: 1, actions: [{ id: "a1", function: { name: "calc", arguments: "17 * 23" } }], reply: "Computing 17 * 23.", result: "391", failure: null },
        { turn: 2, actions: [{ id: "a2", function: { name: "check", arguments: { value: 391 } } }], reply: "Checking the product.", result: null, failure: { kind: "Timeout", detail: "checker did not answer" } },
        { answer: "391" },
      ],
    };
    const { outcome, mapping } = await importShape("field-kinds", memory);
    expect(mapping.version).toBe(2);
    const [c] = await conversationsOf(outcome.dataset_id);
    expect(c.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(c.messages[0].content).toBe("What is 17 * 23?");
    const [assistant] = c.messages.slice(1);
    expect(assistant.steps.filter((s) => s.thinking).map((s) => s.thinking)).toEqual(["Multiply, then check the result."]);
    // Plain-text arguments kept whole; the failure is the second call's result.
    expect(pairs(c)).toEqual([
      ["calc", "391"],
      ["check", { kind: "Timeout", detail: "checker did not answer" }],
    ]);
    expect(assistant.steps.find((s) => s.tool_call?.name === "calc")?.tool_call?.arguments).toEqual({ input: "17 * 23" });
    expect(assistant.content).toBe("391");
  });

  it("results inside the message holding the calls, linked by id out of order; every field not read kept in meta", async () => {
    const log = {
      run: "r-7",
      entries: [
        { speaker: "human", says: "Compare the two files.", at: "09:00" },
        {
          speaker: "bot",
          says: "Reading both.",
          at: "09:01",
          invocations: [
            { invocation_id: "i1", function_name: "read", arguments: { path: "a.txt" } },
            { invocation_id: "i2", function_name: "read", arguments: { path: "b.txt" } },
          ],
          outcome: { items: [{ for_id: "i2", content: "beta" }, { for_id: "i1", content: "alpha" }] },
        },
        { speaker: "bot", says: "They differ: alpha and beta.", at: "09:02", cost: 0.002 },
        { speaker: "human", says: "Thanks.", at: "09:03" },
        { speaker: "bot", says: "You are welcome.", at: "09:04" },
      ],
    };
    const { outcome } = await importShape("results-by-id", log);
    const [c] = await conversationsOf(outcome.dataset_id);
    expect(c.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    const turn = c.messages[1];
    const calls = turn.steps.filter((s) => s.tool_call).map((s) => [s.tool_call!.id, (s.tool_call!.arguments as { path: string }).path]);
    expect(calls).toEqual([
      ["i1", "a.txt"],
      ["i2", "b.txt"],
    ]);
    expect(turn.steps.filter((s) => s.tool_result !== null).map((s) => s.tool_result)).toEqual(["beta", "alpha"]);
    expect(turn.content).toBe("They differ: alpha and beta.");
    expect(c.messages[0].meta).toMatchObject({ at: "09:00" });
    expect(JSON.stringify(turn.meta)).toContain("0.002");
  });
});
