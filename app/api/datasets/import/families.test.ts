/**
 * Issue 49: eight families of conversation files no adapter knows, in small files of our own written in their
 * shapes (lib/import/mapping/fixtures; the shapes read from real public files, nothing copied). Each goes
 * through POST /api/datasets/import with no format named: imported in one step by the structural reader, or
 * refused with a checked mapping (version 2) that imports it when sent back as the `mapping` form field. Then
 * the stored conversations are counted through the API: conversations, turns per role, tool calls with their
 * results, reasoning apart from the text, and what a file says beside the turns (scores, choices) kept in meta.
 */
import fs from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "./route";
import * as conversationsRoute from "../[id]/conversations/route";
import * as conversationRoute from "../../conversations/[id]/route";

const dir = path.resolve(process.cwd(), "lib/import/mapping/fixtures");
const fixture = (name: string) => fs.readFileSync(path.join(dir, name));

type Step = { thinking: string | null; tool_call: { name: string; arguments: unknown; id?: string } | null; tool_result: unknown; output_content: string | null };
type Message = { id: number; role: string; content: string | null; meta: Record<string, unknown> | null; steps: Step[] };
type Conversation = { id: number; name: string | null; meta: Record<string, unknown> | null; messages: Message[] };

/** Imported with no mapping, or else with the mapping the refusal offers (checked); how, and the mapping. */
async function importFamily(name: string, file: Uint8Array | string, filename: string) {
  const first = await upload(createAndImport.POST, "/api/datasets/import", { file, filename, fields: { name } });
  if (first.status === 201) return { how: "one step" as const, outcome: first.json, mapping: first.json.mapping };
  expect([415, 422], first.text).toContain(first.status);
  const mapping = first.json.llm_feedback?.suggested_mapping;
  expect(mapping, `no mapping offered for ${name}: ${first.text.slice(0, 400)}`).toBeDefined();
  expect(mapping.version).toBe(2);
  const second = await upload(createAndImport.POST, "/api/datasets/import", { file, filename, fields: { name, mapping: JSON.stringify(mapping) } });
  expect(second.status, second.text).toBe(201);
  return { how: "with the offered mapping" as const, outcome: second.json, mapping };
}

async function conversationsOf(datasetId: number): Promise<Conversation[]> {
  const list = await call(conversationsRoute.GET, "GET", `/api/datasets/${datasetId}/conversations`, { params: { id: datasetId } });
  const out: Conversation[] = [];
  for (const c of list.json as Array<{ id: number }>) out.push((await call(conversationRoute.GET, "GET", `/api/conversations/${c.id}`, { params: { id: c.id } })).json);
  return out;
}

/** Turns per role, tool calls, the calls answered by a result later in the same turn, and reasoning steps. */
function counts(c: Conversation) {
  const roles: Record<string, number> = {};
  let calls = 0;
  let paired = 0;
  let thinking = 0;
  for (const m of c.messages) {
    roles[m.role] = (roles[m.role] ?? 0) + 1;
    m.steps.forEach((s, i) => {
      if (s.thinking) thinking++;
      if (!s.tool_call) return;
      calls++;
      if (m.steps.slice(i + 1).some((x) => x.tool_result !== null && x.tool_result !== undefined)) paired++;
    });
  }
  return { roles, calls, paired, thinking };
}

const texts = (c: Conversation) => c.messages.map((m) => m.content ?? "");

describe("issue 49: eight families no adapter knows, imported by structure", () => {
  it("1. a tree keyed by node id with a leaf pointer: the current path only, hidden nodes and placeholders left out, citation markers out of the text", async () => {
    const { outcome } = await importFamily("tree", fixture("tree-export.json"), "conversations.json");
    expect(outcome.conversations_imported).toBe(2);
    const [c1, c2] = await conversationsOf(outcome.dataset_id);
    expect(c1.name).toBe("Boiling at altitude");
    expect(counts(c1)).toEqual({ roles: { user: 2, assistant: 2 }, calls: 0, paired: 0, thinking: 0 });
    expect(counts(c2).roles).toEqual({ user: 2, assistant: 1 });
    // The regenerated answer off the current path is not a turn; the hidden system and tool nodes neither.
    expect(texts(c1).join("\n")).not.toContain("colder");
    expect(texts(c1)[1]).toBe("Air pressure falls with height , so water boils sooner: roughly one degree less for every 300 metres .");
    expect(texts(c1).join("")).not.toMatch(/[\ue000-\uf8ff]/);
    expect(c1.messages[1].meta?.markers).toEqual(["cite turn0search0", "cite turn0search2"]);
    expect(c1.meta).toMatchObject({ conversation_id: "6a1f-c1", default_model_slug: "gpt-4o" });
  });

  it("2. a UI event log: the task is the first text record, calls are JSON text, results are found in the next request record", async () => {
    const { outcome } = await importFamily("ui log", fixture("ui-event-log.json"), "ui_messages.json");
    expect(outcome.conversations_imported).toBe(1);
    const [c] = await conversationsOf(outcome.dataset_id);
    expect(counts(c)).toEqual({ roles: { user: 2, assistant: 2 }, calls: 3, paired: 3, thinking: 1 });
    expect(c.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(texts(c)[0]).toBe("Add a --verbose flag to cli.py");
    expect(texts(c)[2]).toBe("Also accept -v as the short form.");
    const steps = c.messages[1].steps;
    expect(steps.find((s) => s.tool_call)?.tool_call).toMatchObject({ name: "readFile", arguments: { path: "cli.py" } });
    expect(String(steps.find((s) => s.tool_result)?.tool_result)).toContain("import argparse");
    expect(steps.find((s) => s.thinking)?.thinking).toContain("argument parser");
  });

  it("3. the speaker is the product's name for the model, calls and their results in one message, thoughts per message", async () => {
    const { outcome } = await importFamily("model-named speaker", fixture("model-named-speaker.json"), "session.json");
    expect(outcome.conversations_imported).toBe(1);
    const [c] = await conversationsOf(outcome.dataset_id);
    expect(counts(c)).toEqual({ roles: { user: 2, assistant: 2 }, calls: 2, paired: 2, thinking: 2 });
    expect(texts(c)[1]).toBe("There are 3 Python files in src: a.py, b.py and pkg/c.py.");
    const steps = c.messages[1].steps;
    expect(steps.find((s) => s.tool_call)?.tool_call).toMatchObject({ name: "glob", arguments: { pattern: "src/**/*.py" }, id: "glob-1759395604-1" });
    expect(steps.find((s) => s.tool_result)?.tool_result).toContain("src/pkg/c.py");
    expect(c.meta).toMatchObject({ sessionId: "0b6c2c1e-5d3e-4f0a-9a51-1f2e3d4c5b6a" });
  });

  it("4. JSON Lines whose lines are arrays: parts re-sent on every change collapse to their last version, lines that are no messages skipped", async () => {
    const { outcome } = await importFamily("array lines", fixture("array-lines.jsonl"), "events.jsonl");
    expect(outcome.conversations_imported).toBe(1);
    const [c] = await conversationsOf(outcome.dataset_id);
    expect(counts(c)).toEqual({ roles: { user: 2, assistant: 2 }, calls: 2, paired: 2, thinking: 1 });
    // The text part's last version, once; the tool part's completed state (its input and output).
    expect(texts(c)[1]).toBe("The root holds README.md, package.json and the src folder.");
    const steps = c.messages[1].steps;
    expect(steps.filter((s) => s.tool_call).map((s) => s.tool_call)).toEqual([{ name: "bash", arguments: { command: "ls" }, id: "toolu_01" }]);
    expect(steps.find((s) => s.tool_result)?.tool_result).toBe("README.md\npackage.json\nsrc");
    // The tool definitions and the system-prompt hook are not turns.
    expect(c.messages.every((m) => !(m.content ?? "").includes("coding agent"))).toBe(true);
  });

  it("5. gzip-compressed preference pairs as plain-text transcripts: refused as gzip with the mapping that reads it, then two conversations per pair, the chosen one ranked first", async () => {
    const gz = gzipSync(fixture("preference-pairs.jsonl"));
    const { how, outcome, mapping } = await importFamily("preference", new Uint8Array(gz), "train.jsonl.gz");
    expect(how).toBe("with the offered mapping");
    expect(mapping.records.container).toBe("gzip");
    expect(outcome.conversations_imported).toBe(6);
    const convs = await conversationsOf(outcome.dataset_id);
    expect(convs.map((c) => counts(c).roles)).toEqual([
      { user: 1, assistant: 1 },
      { user: 1, assistant: 1 },
      { user: 2, assistant: 2 },
      { user: 2, assistant: 2 },
      { user: 1, assistant: 1 },
      { user: 1, assistant: 1 },
    ]);
    expect(texts(convs[0])).toEqual(["How do I keep basil alive indoors?", "Give it a sunny window, water when the top of the soil is dry, and pinch off the flower buds."]);
    // The choice is kept: the pair in the conversations' meta, the rank on the replies a comparison pairs.
    expect(convs.map((c) => (c.meta?.pair as { chosen: boolean }).chosen)).toEqual([true, false, true, false, true, false]);
    const last = (c: Conversation) => c.messages[c.messages.length - 1].meta;
    expect(last(convs[2])).toMatchObject({ parent_id: last(convs[3])?.parent_id, rank: 0 });
    expect(last(convs[3])).toMatchObject({ rank: 1 });
    expect(last(convs[2])?.message_id).not.toBe(last(convs[3])?.message_id);
  });

  it("6. pairwise judge records: both answers cut out of the judge's prompt, the two games' winners agreeing or a tie", async () => {
    const { outcome } = await importFamily("pairwise", fixture("pairwise-judgments.jsonl"), "gpt-4_pair.jsonl");
    expect(outcome.conversations_imported).toBe(8);
    const convs = await conversationsOf(outcome.dataset_id);
    for (const c of convs) expect(counts(c).roles).toEqual({ user: 1, assistant: 1 });
    expect(texts(convs[0])).toEqual(["Name three primary colours.", "Red, yellow and blue (in paint); red, green and blue in light."]);
    expect(texts(convs[1])).toEqual(["Name three primary colours.", "Green."]);
    const pairs = convs.map((c) => c.meta?.pair as { label: string; chosen: boolean | "tie" });
    expect(pairs.map((p) => p.label)).toEqual(["alpha-7b", "beta-13b", "alpha-7b", "beta-13b", "alpha-7b", "beta-13b", "alpha-7b", "beta-13b"]);
    // Question 83's games disagree (model_1, then model_2): a tie; question 84: model_2 both times.
    expect(pairs.map((p) => p.chosen)).toEqual([true, false, true, false, "tie", "tie", false, true]);
    expect(convs[4].meta).toMatchObject({ g1_winner: "model_1", g2_winner: "model_2", question_id: 83 });
    expect(convs[4].messages[1].meta).toMatchObject({ rank: 0 });
    expect(convs[5].messages[1].meta).toMatchObject({ rank: 0 });
  });

  it("7. a run tree as create/update operations in dotted order, constructor messages: the last model call's input and output, once", async () => {
    const { outcome } = await importFamily("runs", fixture("run-operations.json"), "runs.json");
    expect(outcome.conversations_imported).toBe(1);
    const [c] = await conversationsOf(outcome.dataset_id);
    expect(counts(c)).toEqual({ roles: { system: 1, user: 1, assistant: 1 }, calls: 1, paired: 1, thinking: 0 });
    expect(texts(c)[1]).toBe("How many vacation days do new staff get?");
    // The regenerated answer is the conversation's answer once, not twice.
    expect(texts(c)[2]).toBe("New staff get 20 vacation days a year, rising to 25 after five years.");
    expect(c.messages[2].steps.filter((s) => s.output_content)).toHaveLength(1);
    expect(c.messages[2].steps.find((s) => s.tool_call)?.tool_call).toMatchObject({ name: "lookup_policy", arguments: { topic: "vacation" } });
    // The other runs (the retriever, the earlier model calls, the tool) ride in the conversation's meta.
    const spans = c.meta?.spans as Array<{ run_type: string; outputs?: unknown }>;
    expect(spans.map((s) => s.run_type)).toEqual(["chain", "retriever", "llm", "tool", "llm", "llm"]);
    // The last model call without its input (the messages above), its output's other fields kept.
    expect(spans[5]).not.toHaveProperty("inputs");
    expect(spans[5].outputs).toMatchObject({ llm_output: { token_usage: { prompt_tokens: 210 } } });
    expect(JSON.stringify(spans[1].outputs)).toContain("25 after five years of service");
  });

  it("8. a trace export of observations: the last generation's messages with the tool result, the evaluator's scores kept on the conversation", async () => {
    const { outcome } = await importFamily("traces", fixture("trace-observations.json"), "traces.json");
    expect(outcome.conversations_imported).toBe(2);
    const convs = await conversationsOf(outcome.dataset_id);
    for (const c of convs) expect(counts(c)).toEqual({ roles: { system: 1, user: 1, assistant: 1 }, calls: 1, paired: 1, thinking: 0 });
    expect(texts(convs[0])[2]).toBe("It is 22 °C in Lisbon right now.");
    expect(convs[0].messages[2].steps.find((s) => s.tool_call)?.tool_call).toMatchObject({ name: "get_weather", arguments: { city: "Lisbon" } });
    // Ground truth for agreement: the scores on the trace.
    expect(convs.map((c) => (c.meta?.scores as Array<{ name: string; value: number }>).map((s) => [s.name, s.value]))).toEqual([[["correctness", 1]], [["correctness", 0]]]);
  });
});
