/**
 * OpenAI chat-completions message lists → Turnscope conversations. An assistant turn (the assistant
 * and tool messages between two user or system messages) becomes one assistant message: its
 * `tool_calls` become `tool_call` steps, `role: tool` replies become `tool_result` steps, and its
 * text becomes the message content (with `output_content` steps when the turn also used tools).
 * Anything this adapter does not recognise is passed through untouched for the validator to report.
 */
import { isRecord } from "../issues";

type Part = { kind: "text"; text: string } | { kind: "step"; step: Record<string, unknown> };
type Turn = { message: Record<string, unknown>; parts: Part[] };

/** True when some message uses a field only the OpenAI format has. */
export function hasOpenAiMarkers(messages: unknown[]): boolean {
  return messages.some(
    (m) =>
      isRecord(m) &&
      (Array.isArray(m.tool_calls) ||
        typeof m.tool_call_id === "string" ||
        m.role === "developer" ||
        m.role === "function" ||
        (Array.isArray(m.content) && m.content.every((p) => isRecord(p) && typeof p.type === "string"))),
  );
}

/** A chat-completions message: an object with a string role and no `messages` of its own. */
export function isChatMessage(value: unknown): boolean {
  return isRecord(value) && typeof value.role === "string" && !("messages" in value);
}

/** Message content as text: strings as they are, content-part arrays joined, null for none. */
function contentText(content: unknown): string | null | undefined {
  if (content === null || content === undefined) return null;
  if (typeof content === "string") return content;
  if (Array.isArray(content) && content.every(isRecord)) {
    return content
      .map((p) => (typeof p.text === "string" ? p.text : typeof p.refusal === "string" ? p.refusal : ""))
      .filter(Boolean)
      .join("\n");
  }
  return undefined;
}

/** Tool call arguments arrive as a JSON string; keep the string when it is not JSON. */
function parseMaybeJson(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function toolCallStep(call: unknown): Record<string, unknown> {
  if (!isRecord(call)) return { tool_call: call };
  const fn = isRecord(call.function) ? call.function : call;
  const toolCall: Record<string, unknown> = { name: fn.name, arguments: parseMaybeJson(fn.arguments ?? {}) };
  if (typeof call.id === "string") toolCall.id = call.id;
  return { tool_call: toolCall };
}

function finishTurn(turn: Turn): void {
  const texts = turn.parts.filter((p): p is Extract<Part, { kind: "text" }> => p.kind === "text").map((p) => p.text);
  const hasSteps = turn.parts.some((p) => p.kind === "step");
  if (!hasSteps) {
    turn.message.content = texts.length ? texts.join("\n\n") : null;
    return;
  }
  turn.message.content = texts.length ? texts[texts.length - 1] : null;
  turn.message.steps = turn.parts.map((p) => (p.kind === "text" ? { output_content: p.text } : p.step));
}

/**
 * Convert one conversation's chat-completions messages to Turnscope messages. `sources[j]` is the index
 * of the file message that converted message j starts at, so issues can point into the file.
 */
export function convertChatMessages(messages: unknown[]): { messages: unknown[]; sources: number[] } {
  const out: unknown[] = [];
  const sources: number[] = [];
  let turn: Turn | undefined;
  const close = () => {
    if (turn) finishTurn(turn);
    turn = undefined;
  };
  messages.forEach((m, index) => {
    const text = isRecord(m) ? contentText(m.content) : undefined;
    if (!isRecord(m) || typeof m.role !== "string" || text === undefined) {
      close();
      out.push(m);
      sources.push(index);
      return;
    }
    if (m.role === "assistant") {
      if (!turn) {
        turn = { message: { role: "assistant" }, parts: [] };
        out.push(turn.message);
        sources.push(index);
      }
      const reasoning = m.reasoning_content ?? m.reasoning;
      if (typeof reasoning === "string" && reasoning) turn.parts.push({ kind: "step", step: { thinking: reasoning } });
      if (text) turn.parts.push({ kind: "text", text });
      if (Array.isArray(m.tool_calls)) for (const call of m.tool_calls) turn.parts.push({ kind: "step", step: toolCallStep(call) });
      return;
    }
    if ((m.role === "tool" || m.role === "function") && turn) {
      turn.parts.push({ kind: "step", step: { tool_result: parseMaybeJson(m.content) ?? "" } });
      return;
    }
    close();
    const role = m.role === "developer" ? "system" : m.role === "function" ? "tool" : m.role;
    const message: Record<string, unknown> = { role, content: text };
    if (typeof m.name === "string") message.meta = { name: m.name };
    out.push(message);
    sources.push(index);
  });
  close();
  return { messages: out, sources };
}

/** Request-body `tools` ([{type: "function", function: {...}}]) as one agent's tool map. */
function toolsAsAgents(tools: unknown): unknown[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  const entries = tools
    .map((t) => (isRecord(t) && isRecord(t.function) ? t.function : t))
    .filter((f): f is Record<string, unknown> => isRecord(f) && typeof f.name === "string")
    .map((f) => [f.name as string, { name: f.name, description: f.description, parameters: f.parameters }] as const);
  return entries.length ? [{ name: "assistant", tools: Object.fromEntries(entries) }] : undefined;
}

/**
 * One conversation from an OpenAI-shaped object (`{messages, tools?, metadata?}`, a request body or a
 * fine-tuning line) or a bare message array.
 */
export function convertChatConversation(value: unknown): { conversation: unknown; sources?: number[] } {
  if (Array.isArray(value)) {
    const converted = convertChatMessages(value);
    return { conversation: { messages: converted.messages }, sources: converted.sources };
  }
  if (!isRecord(value) || !Array.isArray(value.messages)) return { conversation: value };
  const converted = convertChatMessages(value.messages);
  const conversation: Record<string, unknown> = { messages: converted.messages };
  for (const key of ["name", "description", "meta", "agents"] as const) if (key in value) conversation[key] = value[key];
  if (!("meta" in value) && isRecord(value.metadata)) conversation.meta = value.metadata;
  if (!("agents" in value)) {
    const agents = toolsAsAgents(value.tools);
    if (agents) conversation.agents = agents;
  }
  return { conversation, sources: converted.sources };
}
