// test-stores: no-store (it converts and checks files in memory: lib/import reaches the store only to save, which these tests never do)
/**
 * OpenHands evaluation output (`output.jsonl`: one run per line, `{instance_id, instruction, metadata, history,
 * metrics, test_result, error, instance}`), read by the agent-event adapter. The fixture has the shape of
 * All-Hands-AI/OpenHands evaluation/benchmarks/multi_swe_bench/examples/output.jsonl (in ../shared/realdata, tested
 * through the API in app/api/datasets/import/realdata.test.ts), made small.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkUpload } from "../index";

const fixture = fs.readFileSync(path.join(process.cwd(), "e2e/fixtures/formats/openhands-output.jsonl"));

describe("OpenHands evaluation output", () => {
  const r = checkUpload(new Uint8Array(fixture), { maxBytes: 10_000_000 });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));

  it("makes one conversation per line, named by its instance, with every action's call paired with its observation", () => {
    expect(r.format).toBe("agent_events");
    expect(r.conversations.map((c) => c.name)).toEqual(["example__parser-1", "example__parser-2"]);
    const [done] = r.conversations;
    expect(done.messages.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
    const steps = done.messages[2].steps;
    expect(steps.map((s) => (s.toolCall ? `call:${String((s.toolCall as { name?: unknown }).name)}` : s.toolResult !== null ? "result" : s.thinking ? "thinking" : "output"))).toEqual([
      "thinking",
      "call:execute_bash",
      "result",
      "thinking",
      "call:think",
      "result",
      "output",
      "call:finish",
    ]);
    expect(steps[1].toolCall).toMatchObject({ id: "toolu_01", arguments: { command: "pytest tests/test_parser.py" } });
    expect(steps[4].toolCall).toMatchObject({ name: "think", arguments: { thought: "The parenthesised form loses its flag." } });
    expect(steps[2].toolResult).toBe("FAILED tests/test_parser.py::test_parens - AssertionError");
    expect(done.agents).toEqual([expect.objectContaining({ tools: expect.objectContaining({ execute_bash: expect.anything(), think: expect.anything() }) })]);
  });

  it("keeps the outcome in meta: the finish call, or the run's error; the exit code of each command", () => {
    const [done, failed] = r.conversations.map((c) => c.meta as Record<string, unknown>);
    expect(done.outcome).toMatchObject({ finish: { task_completed: "true" } });
    expect(done.outcome).not.toHaveProperty("error");
    expect(failed.outcome).toMatchObject({ error: expect.stringMatching(/^RuntimeError: Agent reached maximum iteration/), errors: [expect.stringMatching(/maximum iteration/)] });
    expect(done.observations).toContainEqual(expect.objectContaining({ cause: 4, success: false, extras: expect.objectContaining({ metadata: expect.objectContaining({ exit_code: 1 }) }) }));
    expect(done).toMatchObject({ instance_id: "example__parser-1", test_result: { git_patch: expect.stringContaining("SET_FLAG") }, models: ["openai/test-model"] });
  });

  it("counts the recalled workspace context and the run's error as records that are no call or result, keeping their text", () => {
    expect(r.records).toMatchObject({ in_file: 18, skipped: { "action/recall": 2, "observation/recall answering no call": 2, "observation/error answering no call": 1 } });
    const meta = r.conversations[0].meta as { observations: Array<Record<string, unknown>> };
    expect(JSON.stringify(meta.observations)).toContain("Use the GitHub API with the token.");
    // Only the events' display summaries are not stored, and that is said.
    expect(r.notImported.filter((n) => !n.reason).map((n) => n.path)).toEqual(["[].message"]);
  });
});
