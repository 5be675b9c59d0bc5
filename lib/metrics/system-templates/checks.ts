/**
 * Built-in check templates: deterministic checks (lib/checks) with sensible default parameters, listed
 * in the library beside the LLM templates. Their prompt is only a note for the reader: checks call no judge.
 */
import type { SystemTemplate } from "./types";

const check = (t: Omit<SystemTemplate, "kind" | "outputType" | "prompt">): SystemTemplate => ({
  ...t,
  kind: "check",
  outputType: "checkbox",
  prompt: "",
});

export const checkTemplates: SystemTemplate[] = [
  check({
    key: "step.check.tool_call_valid",
    name: "Tool Call Valid (check)",
    description: "Deterministic: the tool exists in the conversation's agents, required parameters are present, none unknown, and types match the declaration.",
    evaluationLevel: "step",
    category: "Checks",
    appliesTo: ["tool_call"],
    check: { type: "tool_call_valid", params: { allow_unknown_params: false } },
  }),
  check({
    key: "step.check.tool_error",
    name: "Tool Result Error (check)",
    description:
      'Deterministic: fails when a tool result reports an error the way tools do — an `error` field, `is_error: true`, a `status` of "error"/"failed", a non-zero exit code, or text starting "Error:" or "Traceback" (signals, statuses, prefixes, a path and a pattern are configurable); the reasoning says when the results carry none of these signals.',
    evaluationLevel: "step",
    category: "Checks",
    appliesTo: ["tool_result"],
    check: { type: "tool_error", params: {} },
  }),
  check({
    key: "conversation.check.required_tools",
    name: "Required Tools (check)",
    description: "Deterministic: every listed tool is called somewhere in the conversation (or, with mode any, at least one). Edit the tool list.",
    evaluationLevel: "conversation",
    category: "Checks",
    check: { type: "required_tools", params: { tools: ["search"], mode: "all" } },
  }),
  check({
    key: "conversation.check.forbidden_tools",
    name: "Forbidden Tools (check)",
    description: "Deterministic: none of the listed tools is ever called in the conversation; the reasoning names where one was. Edit the tool list.",
    evaluationLevel: "conversation",
    category: "Checks",
    check: { type: "forbidden_tools", params: { tools: ["delete_account"] } },
  }),
  check({
    key: "conversation.check.tool_sequence",
    name: "Tool Sequence (check)",
    description: "Deterministic: the listed tools are called in this order (optionally one right after another). Edit the sequence.",
    evaluationLevel: "conversation",
    category: "Checks",
    check: { type: "tool_sequence", params: { tools: ["search", "book"], contiguous: false } },
  }),
  check({
    key: "message.check.step_count",
    name: "Step Budget (check)",
    description: "Deterministic: the assistant message takes no more steps than the budget (default 10) to answer.",
    evaluationLevel: "message",
    category: "Checks",
    check: { type: "step_count", params: { max: 10 } },
  }),
  check({
    key: "conversation.check.turns_to_first_answer",
    name: "Turns to First Answer (check)",
    description: "Deterministic: the assistant answers the user in text within the first N assistant turns (default 2).",
    evaluationLevel: "conversation",
    category: "Checks",
    check: { type: "turns_to_first_answer", params: { max: 2 } },
  }),
  check({
    key: "message.check.latency_budget",
    name: "Latency Budget (check)",
    description: "Deterministic: the message's meta.latency_ms stays within the budget (default 2000 ms); a missing value fails.",
    evaluationLevel: "message",
    category: "Checks",
    check: { type: "meta_budget", params: { path: "meta.latency_ms", op: "<=", value: 2000 } },
  }),
  check({
    key: "message.check.valid_json",
    name: "Valid JSON Output (check)",
    description: "Deterministic: the assistant message's content parses as JSON (a ```json fence around it is allowed).",
    evaluationLevel: "message",
    category: "Checks",
    check: { type: "valid_json", params: {} },
  }),
  check({
    key: "message.check.not_contains",
    name: "Does Not Contain (check)",
    description: "Deterministic: the assistant message does not contain the given text (case-insensitive by default). Edit the text.",
    evaluationLevel: "message",
    category: "Checks",
    check: { type: "text_not_contains", params: { value: "As an AI language model", case_sensitive: false } },
  }),
];
