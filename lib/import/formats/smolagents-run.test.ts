// test-stores: no-store (it converts and checks files in memory: lib/import reaches the store only to save, which these tests never do)
/**
 * smolagents run outputs. Built against huggingface/smolagents
 * `examples/smolagents_benchmark/output/gpt-4o__tool-calling__math__2025-07-24.jsonl` (commit a2790dc: one run per
 * line with `intermediate_steps` in roles system / user / assistant / tool-call / tool-response, the call as a Python
 * repr after "Calling tools:", the assistant text repeating it, a failed call only in its "Error executing tool"
 * text) and the code agent's runs beside it (`gpt-4o__code__math__2025-07-24.jsonl`). The fixture
 * (e2e/fixtures/formats/smolagents-run.jsonl) is a small synthetic file of that shape; a real output placed in
 * ../shared/realdata as smolagents_run.jsonl is read too, and skipped saying so when absent.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { jsonl, readRealdata, realdataFileAbsent, realdataHas } from "@/lib/testing/realdata/files";
import { checkUpload } from "../index";
import { parsePythonLiteral } from "./python-literal";

const check = (text: string) => {
  const r = checkUpload(new TextEncoder().encode(text), { maxBytes: 50_000_000 });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r;
};
const fixture = fs.readFileSync(path.join(process.cwd(), "e2e/fixtures/formats/smolagents-run.jsonl"), "utf8");
type Step = { thinking: string | null; toolCall: Record<string, unknown> | null; toolResult: unknown };
const kinds = (steps: Step[]) => steps.map((s) => (s.thinking ? "thinking" : s.toolCall ? `call:${String(s.toolCall.name)}` : "result"));

describe("smolagents run outputs", () => {
  it("reads each call from its Python repr once (not again from the assistant's rendering), paired with its response", () => {
    const r = check(fixture);
    expect(r.format).toBe("smolagents_run");
    const [toolCalling, code] = r.conversations;
    expect(toolCalling.messages.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
    const steps = toolCalling.messages[2].steps as Step[];
    expect(kinds(steps)).toEqual(["call:python_interpreter", "result", "call:python_interpreter", "result", "call:final_answer", "result"]);
    expect(steps[0].toolCall).toEqual({ name: "python_interpreter", arguments: { code: "6 * 16 / 8" }, id: "call_A1" });
    // The failed call is only in its error text: still a call, its error the result.
    expect(steps[2].toolCall).toEqual({ name: "python_interpreter", arguments: { code: "import sympy\nsympy.Rational(96, 8)" }, id: "failed_1" });
    expect(steps[3].toolResult).toMatch(/^Error:\nError executing tool/);
    expect(r.records).toMatchObject({ skipped: { "assistant text repeating its call": 2 } });
    // The code agent's text is its reasoning; its code is the call's argument.
    expect(kinds(code.messages[2].steps as Step[])).toEqual(["thinking", "call:python_interpreter", "result"]);
    expect((code.messages[2].steps as Step[])[1].toolCall).toMatchObject({ arguments: { code: "print(len('banana'))" } });
  });

  it("keeps the answer, the reference and the token counts in meta", () => {
    const [run] = check(fixture).conversations;
    expect(run.meta).toMatchObject({ answer: "12", true_answer: "12", source: "MATH", failed_calls: 1, token_counts: { total_tokens: 3398 } });
  });

  it("reads Python literals, never evaluates anything else", () => {
    expect(parsePythonLiteral(`[{'a': "it's", 'b': (1, 2.5), 'c': None, 'd': True}]`)?.value).toEqual([{ a: "it's", b: [1, 2.5], c: null, d: true }]);
    expect(parsePythonLiteral("__import__('os')")).toBeUndefined();
  });

  it.skipIf(!realdataHas("smolagents_run.jsonl"))("a real run output: every call of every run stored once", () => {
    const text = readRealdata("smolagents_run.jsonl");
    const r = check(text);
    const written = jsonl(text).flatMap((run) => (run.intermediate_steps as Array<{ role: string; content: Array<{ text?: string }> }>).filter((m) => m.role === "tool-call"));
    const steps = r.conversations.flatMap((c) => c.messages.flatMap((m) => m.steps as Step[]));
    expect(steps.filter((s) => s.toolCall && !String(s.toolCall.id).startsWith("failed_")).length).toBeGreaterThanOrEqual(written.length);
  });
  if (!realdataHas("smolagents_run.jsonl")) it.skip(realdataFileAbsent("smolagents_run.jsonl"), () => {});
});
