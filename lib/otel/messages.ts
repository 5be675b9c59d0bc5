/**
 * Reading the messages a span carries into one neutral form, whatever convention wrote them: the
 * GenAI semantic conventions (`gen_ai.system_instructions`, `gen_ai.input.messages`,
 * `gen_ai.output.messages` as JSON text or structured values), the older per-message events
 * (`gen_ai.user.message`, `gen_ai.choice`, …), and the AI SDK's own attributes (`ai.prompt.messages`,
 * `ai.response.text`, `ai.response.reasoning`, `ai.response.toolCalls`). Pure.
 */
import type { MessageRole } from "@/lib/vocabulary";
import type { Attributes, AttrValue, OtelSpan } from "./types";

/** A message's role, in the vocabulary's words: the roles a conversation's messages have. */
export type Role = MessageRole;

export type Part =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "tool_call"; id?: string; name: string; arguments: unknown }
  | { type: "tool_result"; id?: string; name?: string; result: unknown };

export type Msg = { role: Role; parts: Part[]; finishReason?: string };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

const REPLACEMENT = "\uFFFD";

/**
 * NUL spelt \u0000 inside JSON text becomes U+FFFD once parsed, as in an import: PostgreSQL cannot store
 * NUL, and one such message failed its conversation's rebuild on every pass (keys too).
 */
function withoutNul(this: unknown, _key: string, value: unknown): unknown {
  if (typeof value === "string") return value.includes("\u0000") ? value.replaceAll("\u0000", REPLACEMENT) : value;
  if (value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).some((k) => k.includes("\u0000"))) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k.replaceAll("\u0000", REPLACEMENT), { value: v, enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}

/** JSON text parsed when it is JSON (objects, arrays), the value itself otherwise. */
export function parseMaybeJson(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const t = value.trim();
  if (!t.startsWith("{") && !t.startsWith("[") && !t.startsWith('"')) return value;
  try {
    return JSON.parse(t, t.includes("\\u0000") ? withoutNul : undefined) as unknown;
  } catch {
    return value;
  }
}

function roleOf(value: unknown): Role | undefined {
  if (typeof value !== "string") return undefined;
  const r = value.toLowerCase();
  if (r === "system" || r === "developer") return "system";
  if (r === "user" || r === "human") return "user";
  if (r === "assistant" || r === "model" || r === "ai") return "assistant";
  if (r === "tool" || r === "function" || r === "ipython") return "tool";
  return undefined;
}

/** A tool's output as a value: AI SDK `{type: "json"|"text", value}` unwrapped, JSON text parsed. */
function resultValue(value: unknown): unknown {
  if (isObj(value) && typeof value.type === "string" && "value" in value && Object.keys(value).length <= 3) return parseMaybeJson(value.value);
  if (Array.isArray(value) && value.length > 0 && value.every((p) => isObj(p) && typeof (p.text ?? p.content) === "string")) {
    return value.map((p) => String((p as Obj).text ?? (p as Obj).content)).join("\n");
  }
  return parseMaybeJson(value ?? null);
}

/** One content part of any of the conventions → a Part (undefined for parts that carry nothing we keep). */
function readPart(part: unknown): Part | undefined {
  if (typeof part === "string") return part ? { type: "text", text: part } : undefined;
  if (!isObj(part)) return undefined;
  const type = str(part.type) ?? "text";
  switch (type) {
    case "text":
    case "input_text":
    case "output_text": {
      const t = str(part.content) ?? str(part.text);
      return t ? { type: "text", text: t } : undefined;
    }
    case "reasoning":
    case "thinking": {
      const t = str(part.content) ?? str(part.text) ?? str(part.reasoning) ?? str(part.thinking);
      return t ? { type: "reasoning", text: t } : undefined;
    }
    case "tool_call":
    case "tool-call":
    case "function_call": {
      const fn = isObj(part.function) ? part.function : part;
      const name = str(fn.name) ?? str(part.toolName) ?? "";
      const id = str(part.id) ?? str(part.toolCallId) ?? str(part.call_id);
      const args = parseMaybeJson(fn.arguments ?? part.input ?? part.args ?? {});
      return { type: "tool_call", ...(id ? { id } : {}), name, arguments: args };
    }
    case "tool_call_response":
    case "tool-result":
    case "tool_result":
    case "function_call_output": {
      const id = str(part.id) ?? str(part.toolCallId) ?? str(part.call_id) ?? str(part.tool_call_id);
      const name = str(part.toolName) ?? str(part.name);
      // The spec's schema names it `response`; its examples (and some instrumentations) write `result`.
      const raw = "response" in part ? part.response : "result" in part ? part.result : "output" in part ? part.output : part.content;
      return { type: "tool_result", ...(id ? { id } : {}), ...(name ? { name } : {}), result: resultValue(raw) };
    }
    case "file":
    case "image":
    case "blob":
    case "uri":
      return { type: "text", text: `[${type}]` };
    default: {
      const t = str(part.content) ?? str(part.text);
      return t ? { type: "text", text: t } : undefined;
    }
  }
}

/** A message in GenAI form (`{role, parts}`), chat form (`{role, content, tool_calls}`) or AI SDK form (`{role, content: parts}`). */
function readMessage(value: unknown): Msg | undefined {
  if (!isObj(value)) return undefined;
  const role = roleOf(value.role);
  if (!role) return undefined;
  const parts: Part[] = [];
  const push = (p: Part | undefined) => p && parts.push(p);
  if (Array.isArray(value.parts)) value.parts.forEach((p) => push(readPart(p)));
  else if (Array.isArray(value.content)) value.content.forEach((p) => push(readPart(p)));
  else if (typeof value.content === "string") {
    if (role === "tool") push({ type: "tool_result", ...(str(value.tool_call_id) ?? str(value.id) ? { id: str(value.tool_call_id) ?? str(value.id) } : {}), result: parseMaybeJson(value.content) });
    else push(readPart(value.content));
  } else if (isObj(value.content) && role === "tool") push({ type: "tool_result", result: value.content });
  if (typeof value.reasoning_content === "string" && value.reasoning_content) parts.unshift({ type: "reasoning", text: value.reasoning_content });
  // Chat-completions calls say `type: "function"`: read them as tool calls whatever their type.
  if (Array.isArray(value.tool_calls)) for (const call of value.tool_calls) push(readPart({ ...(isObj(call) ? call : {}), type: "tool_call" }));
  const finish = str(value.finish_reason);
  return { role, parts, ...(finish ? { finishReason: finish } : {}) };
}

/** A list of messages from an attribute holding JSON text or a structured array. */
export function readMessages(value: AttrValue | undefined): Msg[] {
  const parsed = parseMaybeJson(value);
  const items = Array.isArray(parsed) ? parsed : isObj(parsed) ? [parsed] : [];
  return items.map(readMessage).filter((m): m is Msg => m !== undefined);
}

/** `gen_ai.system_instructions`: a list of parts (or one text) → one system message. */
export function readSystemInstructions(value: AttrValue | undefined): Msg | undefined {
  const parsed = parseMaybeJson(value);
  const items = Array.isArray(parsed) ? parsed : parsed === undefined || parsed === null ? [] : [parsed];
  const parts = items.map(readPart).filter((p): p is Part => p?.type === "text");
  return parts.length ? { role: "system", parts } : undefined;
}

/** An event's body: flat attributes, or the JSON text some instrumentations put under one key. */
function eventBody(attributes: Attributes): Obj {
  for (const key of ["gen_ai.event.content", "event.body", "body"]) {
    const parsed = parseMaybeJson(attributes[key]);
    if (isObj(parsed)) return parsed;
  }
  return attributes as Obj;
}

const eventRoles: Record<string, Role> = {
  "gen_ai.system.message": "system",
  "gen_ai.user.message": "user",
  "gen_ai.assistant.message": "assistant",
  "gen_ai.tool.message": "tool",
};

/** The older per-message events of a span: its input messages and its choices. */
export function readEvents(span: Pick<OtelSpan, "events">): { input: Msg[]; output: Msg[] } {
  const input: Msg[] = [];
  const output: Msg[] = [];
  for (const event of span.events) {
    const body = eventBody(event.attributes);
    if (event.name in eventRoles) {
      const role = eventRoles[event.name];
      const m = readMessage({ ...body, role, content: parseMaybeJson(body.content) ?? body.content, tool_calls: parseMaybeJson(body.tool_calls) });
      if (m) input.push(m);
    } else if (event.name === "gen_ai.choice") {
      const message = parseMaybeJson(body.message);
      const inner = isObj(message) ? message : body;
      const m = readMessage({ ...inner, role: inner.role ?? "assistant", tool_calls: parseMaybeJson(inner.tool_calls) });
      if (m) output.push(m);
    }
  }
  return { input, output };
}

/** The AI SDK's output attributes of a model call → one assistant message. */
export function readAiSdkOutput(a: Attributes): Msg | undefined {
  const parts: Part[] = [];
  const reasoning = a["ai.response.reasoning"];
  if (typeof reasoning === "string" && reasoning) parts.push({ type: "reasoning", text: reasoning });
  const textOut = a["ai.response.text"];
  if (typeof textOut === "string" && textOut) parts.push({ type: "text", text: textOut });
  const calls = parseMaybeJson(a["ai.response.toolCalls"]);
  if (Array.isArray(calls)) for (const c of calls) {
    const p = readPart({ ...(isObj(c) ? c : {}), type: "tool-call" });
    if (p) parts.push(p);
  }
  return parts.length ? { role: "assistant", parts } : undefined;
}
