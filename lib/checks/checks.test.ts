/** One test per check: a conversation built for it, a passing and a failing case, and the reasoning text. */
import { describe, expect, it } from "vitest";
import type { AppError } from "@/lib/errors";
import { checkTypes, parseCheckSpec, runCheck, type CheckTree } from "./index";

type StepInit = { thinking?: string; tool_call?: unknown; tool_result?: unknown; output?: string; structured?: unknown };
type MsgInit = { role: "user" | "assistant" | "system" | "tool"; content?: string | null; meta?: unknown; steps?: StepInit[] };

let nextId = 1;
/** A tree shaped like the one the runner loads (ids assigned in order). */
function tree(messages: MsgInit[], agents: unknown = defaultAgents, meta: unknown = {}): CheckTree {
  return {
    conversation: { id: nextId++, goal: null, agents, meta },
    messages: messages.map((m, i) => ({
      id: nextId++,
      position: i,
      role: m.role,
      content: m.content ?? null,
      meta: m.meta,
      steps: (m.steps ?? []).map((s, j) => ({
        id: nextId++,
        position: j,
        thinking: s.thinking ?? null,
        toolCall: s.tool_call ?? null,
        toolResult: s.tool_result ?? null,
        outputContent: s.output ?? null,
        outputStructured: s.structured ?? null,
        modelName: null,
        agentName: null,
      })),
    })),
  };
}

const defaultAgents = [
  {
    name: "support",
    tools: {
      search: { parameters: { query: "string", limit: "integer?" } },
      refund: { parameters: { type: "object", properties: { order_id: { type: "string" }, amount: { type: "number" } }, required: ["order_id"] } },
      cancel: { parameters: { order_id: "string" } },
    },
  },
];

const conv = (t: CheckTree) => ({ type: "conversation" as const, id: t.conversation.id });
const msg = (t: CheckTree, index: number) => ({ type: "message" as const, id: t.messages[index].id });
const step = (t: CheckTree, m: number, s: number) => ({ type: "step" as const, id: t.messages[m].steps[s].id });

function call(name: string, args: unknown): StepInit {
  return { tool_call: { name, arguments: args } };
}

/** An agent turn: search → refund, then an answer. */
const refundTurn = (args: unknown = { order_id: "A1", amount: 12.5 }, resultOf: unknown = { ok: true }): MsgInit[] => [
  { role: "user", content: "refund order A1" },
  {
    role: "assistant",
    content: "Refunded A1.",
    meta: { latency_ms: 1500, tokens: 300, expected: "Refunded A1." },
    steps: [call("search", { query: "A1" }), { tool_result: { hits: 1 } }, call("refund", args), { tool_result: resultOf }, { output: "Refunded A1." }],
  },
];

describe("tool_call_valid", () => {
  it("passes declared calls with required params of the declared types", () => {
    const t = tree(refundTurn());
    const r = runCheck({ type: "tool_call_valid", params: {} }, "conversation", t, conv(t));
    expect(r).toEqual({ result: { value: true, reasoning: "All 2 tool calls ('search', 'refund') match the declared tools." }, score: 1 });
  });
  it("names an undeclared tool, a missing required parameter, an unknown one and a wrong type", () => {
    const t = tree(refundTurn({ amount: "12", note: "x" }));
    const r = runCheck({ type: "tool_call_valid", params: {} }, "step", t, step(t, 1, 2));
    expect(r.score).toBe(0);
    expect(r.result.reasoning).toBe("'refund' is missing required parameter 'order_id'; 'refund' parameter 'amount' is string, declared number; 'refund' has unknown parameter 'note'.");
    const t2 = tree([{ role: "assistant", steps: [call("delete_all", {})] }]);
    expect(runCheck({ type: "tool_call_valid", params: {} }, "message", t2, msg(t2, 0)).result.reasoning).toContain("tool 'delete_all' is not declared by the conversation's agents");
  });
});

describe("required_tools", () => {
  it("all: passes when every tool is called, fails naming the missing ones", () => {
    const t = tree(refundTurn());
    expect(runCheck({ type: "required_tools", params: { tools: ["search", "refund"] } }, "conversation", t, conv(t)).result.value).toBe(true);
    const r = runCheck({ type: "required_tools", params: { tools: ["search", "cancel"] } }, "conversation", t, conv(t));
    expect(r.result).toEqual({ value: false, reasoning: expect.stringContaining("Required tool 'cancel' not called") });
  });
  it("any: one of them is enough", () => {
    const t = tree(refundTurn());
    expect(runCheck({ type: "required_tools", params: { tools: ["cancel", "refund"], mode: "any" } }, "message", t, msg(t, 1)).result.value).toBe(true);
    const r = runCheck({ type: "required_tools", params: { tools: ["cancel"], mode: "any" } }, "message", t, msg(t, 1));
    expect(r.result.reasoning).toContain("None of 'cancel' was called");
  });
});

describe("forbidden_tools", () => {
  it("passes without them and fails naming where a forbidden tool was called", () => {
    const t = tree(refundTurn());
    expect(runCheck({ type: "forbidden_tools", params: { tools: ["cancel"] } }, "conversation", t, conv(t)).result.value).toBe(true);
    const r = runCheck({ type: "forbidden_tools", params: { tools: ["refund"] } }, "conversation", t, conv(t));
    expect(r.result).toEqual({ value: false, reasoning: expect.stringMatching(/^Forbidden tool called: 'refund' at message 2, step 3/) });
  });
});

describe("tool_sequence", () => {
  it("in order passes; out of order fails saying which call was expected", () => {
    const t = tree(refundTurn());
    expect(runCheck({ type: "tool_sequence", params: { tools: ["search", "refund"] } }, "conversation", t, conv(t)).result.value).toBe(true);
    const r = runCheck({ type: "tool_sequence", params: { tools: ["refund", "search"] } }, "conversation", t, conv(t));
    expect(r.result.value).toBe(false);
    expect(r.result.reasoning).toContain("tools called: search → refund");
  });
  it("contiguous fails when another call comes between", () => {
    const t = tree([{ role: "assistant", steps: [call("search", { query: "a" }), call("cancel", { order_id: "1" }), call("refund", { order_id: "1" })] }]);
    expect(runCheck({ type: "tool_sequence", params: { tools: ["search", "refund"] } }, "message", t, msg(t, 0)).result.value).toBe(true);
    const r = runCheck({ type: "tool_sequence", params: { tools: ["search", "refund"], contiguous: true } }, "message", t, msg(t, 0));
    expect(r.result).toEqual({ value: false, reasoning: "The sequence search → refund does not occur without other calls in between; tools called: search → cancel → refund." });
  });
});

describe("tool_error", () => {
  it("fails on a tool result whose error field is set, with a pattern only when it matches", () => {
    const ok = tree(refundTurn());
    expect(runCheck({ type: "tool_error", params: {} }, "conversation", ok, conv(ok)).result.value).toBe(true);
    const bad = tree(refundTurn(undefined, { error: "card declined" }));
    const r = runCheck({ type: "tool_error", params: {} }, "step", bad, step(bad, 1, 3));
    expect(r.result).toEqual({ value: false, reasoning: 'the tool result reports error = "card declined".' });
    expect(runCheck({ type: "tool_error", params: { pattern: "timeout" } }, "step", bad, step(bad, 1, 3)).result.value).toBe(true);
  });
});

describe("step_count", () => {
  it("counts the steps in scope against min/max", () => {
    const t = tree(refundTurn());
    expect(runCheck({ type: "step_count", params: { max: 5 } }, "message", t, msg(t, 1)).result).toEqual({ value: true, reasoning: "5 steps, at most 5 allowed." });
    expect(runCheck({ type: "step_count", params: { max: 3 } }, "conversation", t, conv(t)).result).toEqual({ value: false, reasoning: "5 steps: more than the maximum of 3." });
  });
});

describe("message_count", () => {
  it("counts messages, optionally of one role", () => {
    const t = tree(refundTurn());
    expect(runCheck({ type: "message_count", params: { max: 2 } }, "conversation", t, conv(t)).result.value).toBe(true);
    const r = runCheck({ type: "message_count", params: { min: 2, role: "user" } }, "conversation", t, conv(t));
    expect(r.result).toEqual({ value: false, reasoning: "1 user message: fewer than the minimum of 2." });
  });
});

describe("turns_to_first_answer", () => {
  it("passes when an assistant answers in text within max turns", () => {
    const t = tree([{ role: "user", content: "hi" }, { role: "assistant", content: null, steps: [call("search", { query: "x" })] }, { role: "assistant", content: "Here." }]);
    expect(runCheck({ type: "turns_to_first_answer", params: { max: 2 } }, "conversation", t, conv(t)).result).toEqual({ value: true, reasoning: "First answer at assistant turn 2 (message 3), within 2." });
    expect(runCheck({ type: "turns_to_first_answer", params: { max: 1 } }, "conversation", t, conv(t)).result).toEqual({
      value: false,
      reasoning: "First answer at assistant turn 2 (message 3): more than the maximum of 1.",
    });
  });
});

describe("meta_budget", () => {
  it("reads a number from meta and compares it with the budget", () => {
    const t = tree(refundTurn());
    expect(runCheck({ type: "meta_budget", params: { path: "meta.latency_ms", value: 2000 } }, "message", t, msg(t, 1)).result).toEqual({
      value: true,
      reasoning: "meta.latency_ms = 1500, within the budget <= 2000.",
    });
    expect(runCheck({ type: "meta_budget", params: { path: "meta.latency_ms", value: 1000 } }, "message", t, msg(t, 1)).result).toEqual({
      value: false,
      reasoning: "meta.latency_ms = 1500, breaks the budget <= 1000.",
    });
    expect(runCheck({ type: "meta_budget", params: { path: "meta.cost", value: 1 } }, "message", t, msg(t, 1)).result).toEqual({ value: false, reasoning: "meta.cost is missing." });
  });
});

describe("text checks", () => {
  const t = tree(refundTurn());
  it("contains / not contains", () => {
    expect(runCheck({ type: "text_contains", params: { value: "refunded" } }, "message", t, msg(t, 1)).result.value).toBe(true);
    expect(runCheck({ type: "text_contains", params: { value: "sorry" } }, "message", t, msg(t, 1)).result).toEqual({ value: false, reasoning: 'the message does not contain "sorry".' });
    expect(runCheck({ type: "text_not_contains", params: { value: "sorry" } }, "message", t, msg(t, 1)).result.value).toBe(true);
    const r = runCheck({ type: "text_not_contains", params: { value: "A1" } }, "step", t, step(t, 1, 4));
    expect(r.result).toEqual({ value: false, reasoning: expect.stringContaining("the step's output contains \"A1\" at character 10") });
  });
  it("regex", () => {
    expect(runCheck({ type: "text_regex", params: { pattern: "A\\d+" } }, "message", t, msg(t, 1)).result).toEqual({ value: true, reasoning: 'the message matches /A\\d+/: "A1".' });
    expect(runCheck({ type: "text_regex", params: { pattern: "^Sorry" } }, "message", t, msg(t, 1)).result).toEqual({ value: false, reasoning: "the message does not match /^Sorry/." });
  });
  it("equals a meta field", () => {
    expect(runCheck({ type: "text_equals_meta", params: { path: "meta.expected" } }, "message", t, msg(t, 1)).result.value).toBe(true);
    const other = tree([{ role: "assistant", content: "No.", meta: { expected: "Yes." } }]);
    expect(runCheck({ type: "text_equals_meta", params: { path: "meta.expected" } }, "message", other, msg(other, 0)).result).toEqual({
      value: false,
      reasoning: 'the message is "No.", meta.expected is "Yes.".',
    });
  });
  it("valid JSON and JSON matching a schema, on output_structured too", () => {
    const j = tree([{ role: "assistant", steps: [{ output: '{"a": 1}' }, { output: "{a: 1}" }, { structured: { a: "x" } }] }]);
    expect(runCheck({ type: "valid_json", params: {} }, "step", j, step(j, 0, 0)).result).toEqual({ value: true, reasoning: "the step's output is valid JSON." });
    expect(runCheck({ type: "valid_json", params: {} }, "step", j, step(j, 0, 1)).result.reasoning).toMatch(/^the step's output is not valid JSON: /);
    const schema = { type: "object", properties: { a: { type: "integer" } }, required: ["a"] };
    expect(runCheck({ type: "json_schema", params: { schema } }, "step", j, step(j, 0, 0)).result.value).toBe(true);
    expect(runCheck({ type: "json_schema", params: { schema } }, "step", j, step(j, 0, 2)).result).toEqual({
      value: false,
      reasoning: "the step's structured output does not match the JSON Schema: /a must be integer.",
    });
  });
});

describe("parseCheckSpec", () => {
  it("rejects an unknown type, a wrong level and bad params with the reason (422)", () => {
    const fail = (spec: unknown, level: "conversation" | "message" | "step") => {
      try {
        parseCheckSpec(spec, level);
      } catch (e) {
        return e as AppError;
      }
      throw new Error("expected a rejection");
    };
    expect(fail({ type: "nope" }, "step").message).toContain(`check.type must be one of: ${checkTypes.join(", ")}`);
    expect(fail({ type: "message_count", params: { max: 3 } }, "step").message).toBe("The message_count check works at the conversation level, not step");
    const bad = fail({ type: "text_regex", params: { pattern: "(" } }, "message");
    expect(bad.details?.[0].path).toBe("check.params.pattern");
    expect(fail({ type: "step_count", params: {} }, "message").message).toContain("give min, max or both");
    expect(fail({ type: "json_schema", params: { schema: { type: "nope" } } }, "step").message).toContain("is not a valid JSON Schema");
  });
});
