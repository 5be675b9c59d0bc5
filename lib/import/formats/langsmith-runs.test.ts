// test-stores: no-store (it converts and checks files in memory: lib/import reaches the store only to save, which these tests never do)
/**
 * LangSmith runs, written from the LangSmith SDK's run schema (`id`, `run_type`, `inputs`, `outputs`,
 * `child_runs`, `parent_run_id`, `trace_id`, `dotted_order`, `extra.metadata`) and LangChain's message
 * serialisation (`{lc: 1, type: "constructor", id: [..., "AIMessage"], kwargs}` with `tool_calls` as
 * `{name, args, id}`). The fixture (e2e/fixtures/formats/langsmith-run-tree.json) is my own tool-calling agent's
 * trace: a chain, two model calls and the tool run between them.
 */
import { describe, expect, it } from "vitest";
import { checkFile as check, formatFixture, stepKinds as kinds, type Step } from "@/lib/testing/import/formats";

const fixture = formatFixture("langsmith-run-tree.json");

/** A LangGraph-style trace, flat: the root's state holds the conversation as dict-form messages. */
function graphTrace(id: string, question: string, answer: string) {
  const messages = [
    { type: "human", content: question, id: `${id}-h` },
    { type: "ai", content: "", id: `${id}-a1`, tool_calls: [{ name: "lookup", args: { q: question }, id: `${id}-t`, type: "tool_call" }] },
    { type: "tool", content: `found: ${question}`, name: "lookup", tool_call_id: `${id}-t`, id: `${id}-r` },
    { type: "ai", content: answer, id: `${id}-a2` },
  ];
  return [
    { id, name: "LangGraph", run_type: "chain", trace_id: id, parent_run_id: null, dotted_order: `1${id}`, inputs: { messages: messages.slice(0, 1) }, outputs: { messages }, extra: { metadata: { thread_id: `thread-${id}` } } },
    { id: `${id}-n1`, name: "agent", run_type: "chain", trace_id: id, parent_run_id: id, dotted_order: `1${id}.2`, inputs: { messages: messages.slice(0, 1) }, outputs: { messages: messages.slice(1, 2) } },
    { id: `${id}-n2`, name: "lookup", run_type: "tool", trace_id: id, parent_run_id: id, dotted_order: `1${id}.3`, inputs: { q: question }, outputs: { output: messages[2] } },
  ];
}

describe("LangSmith runs", () => {
  it("a run tree: the last model call's messages and answer, calls paired with results, the runs and usage in meta", () => {
    const r = check(fixture);
    expect(r.format).toBe("langsmith_runs");
    expect(r.notImported).toEqual([]);
    const [c] = r.conversations;
    expect(c.name).toBe("AgentExecutor");
    expect(c.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", "You are a travel assistant. Use tools for facts."],
      ["user", "Is it warm in Lisbon today?"],
      ["assistant", "Yes — it is 24°C and sunny in Lisbon."],
    ]);
    const steps = c.messages[2].steps as Step[];
    expect(kinds(steps)).toEqual(["call:get_weather", "result", "output"]);
    expect(steps[0].toolCall).toEqual({ name: "get_weather", arguments: { city: "Lisbon" }, id: "call_w1" });
    expect(steps[1].toolResult).toBe("24°C and sunny");
    expect(c.meta).toMatchObject({
      tags: ["travel-bot", "v2"],
      metadata: { user_id: "u-17" },
      runs: [
        { name: "AgentExecutor", run_type: "chain" },
        { name: "ChatOpenAI", run_type: "llm", metadata: { ls_model_name: "gpt-4o-mini" } },
        { name: "get_weather", run_type: "tool" },
        { name: "ChatOpenAI", run_type: "llm", usage: { input_tokens: 120, output_tokens: 14 } },
      ],
    });
    expect(r.records).toMatchObject({ in_file: 4, explanation: expect.stringContaining("runs in 1 trace") });
  });

  it("flat runs, one per line or in a list: grouped by trace, each read from its root's state", () => {
    const runs = [...graphTrace("t1", "Who wrote Dune?", "Frank Herbert."), ...graphTrace("t2", "Capital of Peru?", "Lima.")];
    for (const text of [JSON.stringify(runs), runs.map((x) => JSON.stringify(x)).join("\n")]) {
      const r = check(text);
      expect(r.format).toBe("langsmith_runs");
      expect(r.notImported).toEqual([]);
      expect(r.conversations.map((c) => c.messages.map((m) => [m.role, m.content]))).toEqual([
        [["user", "Who wrote Dune?"], ["assistant", "Frank Herbert."]],
        [["user", "Capital of Peru?"], ["assistant", "Lima."]],
      ]);
      expect(kinds(r.conversations[0].messages[1].steps as Step[])).toEqual(["call:lookup", "result", "output"]);
      expect(r.conversations[1].meta).toMatchObject({ metadata: { thread_id: "thread-t2" }, runs: [{ name: "LangGraph" }, { name: "agent" }, { name: "lookup" }] });
    }
  });

  it("a traced OpenAI client (wrap_openai): the model call's request messages and its first choice, with its tool call", () => {
    const request = { model: "gpt-4o-mini", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Convert 5 km to miles." }], tools: [{ type: "function", function: { name: "convert" } }] };
    const first = { choices: [{ index: 0, finish_reason: "tool_calls", message: { role: "assistant", content: null, tool_calls: [{ id: "tc1", type: "function", function: { name: "convert", arguments: '{"km": 5}' } }] } }], usage: { prompt_tokens: 30, completion_tokens: 9 } };
    const second = { choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "5 km is about 3.11 miles." } }], usage: { prompt_tokens: 52, completion_tokens: 11 } };
    const withResult = { ...request, messages: [...request.messages, first.choices[0].message, { role: "tool", tool_call_id: "tc1", content: "3.107" }] };
    const tree = {
      id: "r1", name: "answer", run_type: "chain", inputs: { question: "Convert 5 km to miles." }, outputs: { output: "5 km is about 3.11 miles." },
      child_runs: [
        { id: "r2", name: "ChatOpenAI", run_type: "llm", parent_run_id: "r1", dotted_order: "a.1", inputs: request, outputs: first },
        { id: "r3", name: "convert", run_type: "tool", parent_run_id: "r1", dotted_order: "a.2", inputs: { km: 5 }, outputs: { output: "3.107" } },
        { id: "r4", name: "ChatOpenAI", run_type: "llm", parent_run_id: "r1", dotted_order: "a.3", inputs: withResult, outputs: second },
      ],
    };
    const r = check(JSON.stringify(tree));
    expect(r.format).toBe("langsmith_runs");
    const [c] = r.conversations;
    expect(c.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", "Be brief."],
      ["user", "Convert 5 km to miles."],
      ["assistant", "5 km is about 3.11 miles."],
    ]);
    expect(kinds(c.messages[2].steps as Step[])).toEqual(["call:convert", "result", "output"]);
    expect((c.messages[2].steps as Step[])[0].toolCall).toEqual({ name: "convert", arguments: { km: 5 }, id: "tc1" });
    expect(r.notImported).toEqual([]);
  });

  it("runs under `runs` (a runs query's page), a tool run's input and output as plain text", () => {
    const page = {
      runs: [
        { id: "p1", name: "stats_agent", run_type: "chain", inputs: { user_message: "Top scorer this season?" }, outputs: { final_response: "Ana, with 31 goals." }, child_runs: [{ id: "p2", name: "sql_tool", run_type: "tool", parent_run_id: "p1", inputs: "SELECT name FROM players ORDER BY goals DESC LIMIT 1", outputs: "[{name: Ana, goals: 31}]" }] },
      ],
      cursors: { next: null },
    };
    const r = check(JSON.stringify(page));
    expect(r.format).toBe("langsmith_runs");
    expect(r.conversations[0].messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "Top scorer this season?"],
      ["assistant", "Ana, with 31 goals."],
    ]);
    // The tool run's SQL and rows are in no message: listed, not dropped silently.
    expect(r.notImported.map((n) => n.path).sort()).toEqual(["[].inputs", "[].outputs"]);
  });

  it("a long chain of parents and a cycle of them are each walked once: one trace, no hang", () => {
    const n = 20_000;
    const chain = Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: `step ${i}`, run_type: "chain", parent_run_id: i === 0 ? null : `c${i - 1}`, inputs: {}, outputs: {} }));
    const r = check(JSON.stringify(chain));
    expect(r.format).toBe("langsmith_runs");
    expect(r.conversations).toHaveLength(1);
    expect((r.conversations[0].meta as { runs: unknown[] }).runs).toHaveLength(n);
    const cycle = check(JSON.stringify([{ id: "a", name: "a", run_type: "chain", parent_run_id: "b", inputs: { q: "x" }, outputs: {} }, { id: "b", name: "b", run_type: "chain", parent_run_id: "a", inputs: {}, outputs: {} }]));
    expect(cycle.format).toBe("langsmith_runs");
  });

  it("a chain with no model call: its inputs are the question, its outputs the answer; an errored run says so", () => {
    const r = check(JSON.stringify({ id: "c1", name: "qa_chain", run_type: "chain", inputs: { question: "What is 2+2?" }, outputs: { answer: "4" }, child_runs: [{ id: "c2", name: "calc", run_type: "tool", parent_run_id: "c1", inputs: { expr: "add(2, 2)" }, outputs: null, error: "ValueError: calculator offline" }] }));
    expect(r.format).toBe("langsmith_runs");
    const [c] = r.conversations;
    expect(c.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "What is 2+2?"],
      ["assistant", "4"],
    ]);
    expect(c.meta).toMatchObject({ runs: [{ name: "qa_chain" }, { name: "calc", error: "ValueError: calculator offline" }] });
    // The tool run's input is nowhere in the conversation: listed, not dropped silently.
    expect(r.notImported).toEqual([expect.objectContaining({ path: "[].inputs.expr", characters: 9 })]);
  });
});
