/**
 * Issue 22.1 and 22.5: user regexes run on RE2, so a catastrophic-backtracking pattern cannot stall the
 * process (before: `(a+)+$` over 30 `a`s and a `b` took 70+ s on RegExp, doubling per character), and a
 * json_schema with `$id` keeps working after its first compile (before: "already exists" until restart).
 */
import { describe, expect, it } from "vitest";
import type { AppError } from "@/lib/errors";
import { checkVerdict } from "@/lib/judge/verdicts";
import { MAX_PATTERN_LENGTH, patternProblem } from "@/lib/user-regex";
import { parseCheckSpec, prepareCheck, runCheck, type CheckTree } from "./index";

let nextId = 1;
function tree(content: string, step: { tool_result?: unknown; output?: string }): CheckTree {
  return {
    conversation: { id: nextId++, goal: null, agents: null, meta: {} },
    messages: [
      {
        id: nextId++,
        position: 0,
        role: "assistant",
        content,
        steps: [
          {
            id: nextId++,
            position: 0,
            thinking: null,
            toolCall: null,
            toolResult: step.tool_result ?? null,
            outputContent: step.output ?? null,
            outputStructured: null,
            modelName: null,
            agentName: null,
          },
        ],
      },
    ],
  };
}
const msg = (t: CheckTree) => ({ type: "message" as const, id: t.messages[0].id });
const step = (t: CheckTree) => ({ type: "step" as const, id: t.messages[0].steps[0].id });

function refusal(spec: unknown, level: "message" | "step"): AppError {
  try {
    parseCheckSpec(spec, level);
  } catch (e) {
    return e as AppError;
  }
  throw new Error("expected a refusal");
}

// 30 is the case (73 s on RegExp); the longer ones would never finish on a backtracking engine.
const evil = [30, 40, 5_000, 200_000].map((n) => `${"a".repeat(n)}b`);

describe("catastrophic patterns finish (RE2, linear time)", () => {
  it("text_regex (a+)+$ over a's and a b: no match, with the reasoning", () => {
    for (const text of evil) {
      const t = tree(text, {});
      expect(runCheck({ type: "text_regex", params: { pattern: "(a+)+$" } }, "message", t, msg(t)).result).toEqual({
        value: false,
        reasoning: "the message does not match /(a+)+$/.",
      });
    }
    const t = tree("aaaa", {});
    expect(runCheck({ type: "text_regex", params: { pattern: "(a+)+$" } }, "message", t, msg(t)).result).toEqual({ value: true, reasoning: 'the message matches /(a+)+$/: "aaaa".' });
  });

  it("tool_error pattern (a+)+$ over an error value of a's and a b: not reported", () => {
    for (const text of evil) {
      const t = tree("x", { tool_result: { error: text } });
      const r = runCheck({ type: "tool_error", params: { pattern: "^(a+)+$" } }, "step", t, step(t));
      expect(r.result.value).toBe(true);
    }
    const t = tree("x", { tool_result: { error: "AAAA" } });
    expect(runCheck({ type: "tool_error", params: { pattern: "^(a+)+$" } }, "step", t, step(t)).result.value).toBe(false);
  });

  it("json_schema pattern and patternProperties (a+)+$: the output does not match, with ajv's reason", () => {
    const schema = { type: "object", properties: { v: { type: "string", pattern: "^(a+)+$" } }, patternProperties: { "^(x+)+$": { type: "number" } } };
    for (const text of evil) {
      const t = tree("x", { output: JSON.stringify({ v: text, [`${"x".repeat(40)}y`]: "not checked" }) });
      const r = runCheck({ type: "json_schema", params: { schema } }, "step", t, step(t));
      expect(r.result).toEqual({ value: false, reasoning: `the step's output does not match the JSON Schema: /v must match pattern "^(a+)+$".` });
    }
    const t = tree("x", { output: JSON.stringify({ v: "aaa", xxx: "text" }) });
    expect(runCheck({ type: "json_schema", params: { schema } }, "step", t, step(t)).result.reasoning).toContain("/xxx must be number");
  });

  it("a metric output_schema's patterns run on RE2 too", () => {
    const outputSchema = { type: "object", properties: { value: { type: "string", pattern: "^(a+)+$" } } };
    expect(checkVerdict("json", outputSchema, { value: `${"a".repeat(40)}b` })).toEqual({ ok: false, reason: 'the verdict does not match the output schema: /value must match pattern "^(a+)+$"' });
  });
});

describe("patterns RE2 cannot run are refused on save, naming the field and the syntax", () => {
  it("backreferences and lookaround in text_regex, tool_error and json_schema", () => {
    const regex = refusal({ type: "text_regex", params: { pattern: "(a)\\1" } }, "message");
    expect(regex.status).toBe(422);
    expect(regex.details).toEqual([{ path: "check.params.pattern", message: expect.stringContaining("RE2 syntax") }]);
    expect(regex.message).toContain("no backreferences");

    const tool = refusal({ type: "tool_error", params: { pattern: "(?=timeout)" } }, "step");
    expect(tool.details).toEqual([{ path: "check.params.pattern", message: expect.stringMatching(/not accepted.*RE2 syntax.*lookahead/) }]);

    const schema = refusal({ type: "json_schema", params: { schema: { properties: { v: { pattern: "(?<=x)y" } } } } }, "step");
    expect(schema.details).toEqual([{ path: "check.params.schema", message: expect.stringMatching(/pattern "\(\?<=x\)y" is not accepted.*RE2 syntax/) }]);
    const props = refusal({ type: "json_schema", params: { schema: { patternProperties: { "(a)\\1": {} } } } }, "step");
    expect(props.details?.[0].message).toContain("RE2 syntax");
  });

  it("too long or too complex patterns", () => {
    expect(refusal({ type: "text_regex", params: { pattern: "a".repeat(MAX_PATTERN_LENGTH + 1) } }, "message").details?.[0].path).toBe("check.params.pattern");
    expect(patternProblem("[a-z]{1000}[a-z]{1000}")).toMatch(/too complex/);
    expect(patternProblem("(((a{100}){100}){100})")).toMatch(/not accepted/);
  });

  it("common JavaScript spellings still compile: \\d, \\uXXXX, named groups, flags", () => {
    for (const p of ["\\d{3}-\\d{4}", "caf\\u00e9", "(?<year>\\d{4})", "^\\s*$", "[\\w.-]+@[\\w.-]+"]) expect(patternProblem(p)).toBeNull();
    const t = tree("Line one\nCAFÉ 2024", {});
    expect(runCheck({ type: "text_regex", params: { pattern: "^caf\\u00e9 (?<year>\\d{4})$", flags: "im" } }, "message", t, msg(t)).result.value).toBe(true);
  });

  it("a stored pattern RE2 refuses (saved before RE2) fails its cells with the reason instead of running", () => {
    const run = () => prepareCheck({ type: "text_regex", params: { pattern: "(a)\\1" } }, "message");
    expect(run).toThrow(/check\.params\.pattern is not accepted.*RE2 syntax/);
  });
});

describe("json_schema with $id (issue 22.5)", () => {
  it("compiles again and again, and two schemas may share an $id", () => {
    const schema = () => ({ $id: "https://example.com/answer", type: "object", required: ["a"] });
    const other = { $id: "https://example.com/answer", type: "object", required: ["b"] };
    const t = tree("x", { output: '{"a": 1}' });
    for (let i = 0; i < 3; i++) {
      // A run parses the saved spec afresh each time, as after a save or in the next run.
      expect(runCheck({ type: "json_schema", params: { schema: schema() } }, "step", t, step(t)).result).toEqual({ value: true, reasoning: "the step's output matches the JSON Schema." });
    }
    expect(runCheck({ type: "json_schema", params: { schema: other } }, "step", t, step(t)).result).toEqual({
      value: false,
      reasoning: "the step's output does not match the JSON Schema: (root) must have required property 'b'.",
    });
    const outputSchema = { $id: "https://example.com/verdict", type: "object", required: ["value"] };
    expect(checkVerdict("json", outputSchema, { value: 1 }).ok).toBe(true);
    expect(checkVerdict("json", { ...outputSchema, required: ["score"] }, { value: 1 })).toEqual({ ok: false, reason: "the verdict does not match the output schema: (root) must have required property 'score'" });
  });
});
