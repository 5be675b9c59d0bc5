/**
 * A conversation in OpenAI's chat format, one JSON Lines record: `{"messages": [...], "tools": [...],
 * "metadata": {...}, "name": "..."}` — the shape fine-tuning and most evaluators read. An assistant message is one
 * chat message per model call (its text, `reasoning_content` when it has reasoning, `tool_calls`), each followed
 * by `tool` messages holding its results, paired with the calls in order (`tool_call_id`). `tools` are the
 * conversation's agents' tools as function definitions (left out when none are declared); `metadata` is the
 * conversation's meta, kept apart from the messages; `name` its name when it has one. The import reads such a
 * line back into the same messages, steps, meta and name.
 */
import type { Conversation } from "@/lib/schemas/datasets";
import { toolDefinitionsOf } from "./atif";
import { isRecord } from "@/lib/vocabulary";

type Rec = Record<string, unknown>;
type WireMessage = Conversation["messages"][number];

const text = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));

/** An assistant message as chat messages: each model call's message, then its tool results. */
function assistantMessages(m: WireMessage): Rec[] {
  if (!m.steps.length) return [{ role: "assistant", content: m.content ?? "" }];
  const out: Rec[] = [];
  let call: Rec | undefined;
  let results: Rec[] = [];
  let pending: string[] = [];
  const flush = () => {
    if (call) out.push(call, ...results);
    call = undefined;
    results = [];
    pending = [];
  };
  const open = () => (call ??= { role: "assistant", content: null });
  m.steps.forEach((s, k) => {
    // A new model call starts with reasoning or text after the last one's calls or results, or a second of either.
    const current = call;
    const afterTools = results.length > 0 || (current !== undefined && Array.isArray(current.tool_calls));
    if (s.thinking !== null && (afterTools || (current && current.reasoning_content !== undefined) || (current && current.content !== null))) flush();
    if (s.output_content !== null && (afterTools || (current && current.content !== null))) flush();
    if (s.tool_call !== null && results.length > 0) flush();
    const message = open();
    if (s.thinking !== null) message.reasoning_content = s.thinking;
    if (s.output_content !== null) message.content = s.output_content;
    if (s.tool_call !== null) {
      const c = isRecord(s.tool_call) ? s.tool_call : { name: String(s.tool_call) };
      const id = typeof c.id === "string" && c.id ? c.id : `call_${m.id}_${k + 1}`;
      const args = c.arguments === undefined || c.arguments === null ? {} : c.arguments;
      const calls = (message.tool_calls ??= []) as Rec[];
      calls.push({ id, type: "function", function: { name: typeof c.name === "string" ? c.name : "tool", arguments: typeof args === "string" ? args : JSON.stringify(args) } });
      if (s.tool_result !== null) results.push({ role: "tool", tool_call_id: id, content: text(s.tool_result) });
      else pending.push(id);
    } else if (s.tool_result !== null) {
      const id = pending.shift();
      results.push({ role: "tool", ...(id ? { tool_call_id: id } : {}), content: text(s.tool_result) });
    }
  });
  flush();
  return out;
}

/** One conversation as an OpenAI chat-format record. */
export function conversationToOpenAiChat(c: Conversation): Rec {
  const messages: Rec[] = [];
  for (const m of c.messages) {
    if (m.role === "assistant") messages.push(...assistantMessages(m));
    else messages.push({ role: m.role, content: m.content ?? "" });
  }
  const record: Rec = { messages };
  const tools = toolDefinitionsOf(c.agents);
  if (tools.length) record.tools = tools;
  if (isRecord(c.meta)) record.metadata = c.meta;
  if (c.name) record.name = c.name;
  return record;
}
