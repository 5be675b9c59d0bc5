/**
 * What every chat-shaped adapter shares: reading one file message (OpenAI, ShareGPT, Anthropic, or
 * content parts under other names) into text and steps, and folding an assistant turn — the assistant
 * messages and the tool replies between two user or system messages — into one Turnscope message.
 * The adapters differ in how they are detected and where a record keeps its messages, not in this.
 */
import { isRecord } from "../issues";

export type Piece = { kind: "text"; text: string } | { kind: "step"; step: Record<string, unknown> };

/** One file message read: its role, its text and steps in order, and the fields kept as meta. */
type ReadMessage = { role: string; pieces: Piece[]; meta?: Record<string, unknown>; toolReply: boolean };

/** Index of the file message a converted message starts at, or a path within the record (`system`). */
export type MessageSource = number | string;

/** ShareGPT / LLaMA-Factory `from` values and the role each stands for. */
const sharegptRoles: Record<string, string> = {
  human: "user",
  user: "user",
  gpt: "assistant",
  assistant: "assistant",
  system: "system",
  function_call: "assistant",
  observation: "tool",
  tool: "tool",
  function: "tool",
};

const textTypes = new Set(["text", "input_text", "output_text", "summary_text", ""]);
const thinkingTypes = new Set(["reasoning", "thinking", "redacted_thinking"]);
const toolCallTypes = new Set(["tool_call", "tool_use", "function_call", "tool-call", "server_tool_use"]);
const toolResultTypes = new Set(["tool_result", "function_call_output", "tool_output", "tool-result", "function_result"]);
const placeholders: Record<string, string> = {
  image_url: "[image]",
  image: "[image]",
  input_image: "[image]",
  input_audio: "[audio]",
  audio: "[audio]",
  file: "[file]",
  input_file: "[file]",
  document: "[document]",
};

const own = (obj: Record<string, unknown>, key: string) => Object.prototype.hasOwnProperty.call(obj, key);

/** The JSON texts parseMaybeJson turned into values, while withParsedJsonTexts collects them. */
let parsedJsonTexts: Set<string> | null = null;

/** Run `read` (an adapter, synchronous) and say which JSON texts of the file it stored parsed (lib/import/reserialised). */
export function withParsedJsonTexts<T>(read: () => T): { result: T; parsed: Set<string> } {
  const outer = parsedJsonTexts;
  const parsed = new Set<string>();
  parsedJsonTexts = parsed;
  try {
    return { result: read(), parsed };
  } finally {
    parsedJsonTexts = outer;
  }
}

/** Tool arguments and results often arrive as JSON strings; keep the string when it is not JSON. */
export function parseMaybeJson(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const t = value.trimStart();
  if (!t.startsWith("{") && !t.startsWith("[")) return value;
  try {
    const parsed = JSON.parse(value) as unknown;
    parsedJsonTexts?.add(value);
    return parsed;
  } catch {
    return value;
  }
}

/** The text a part holds under whichever name its format uses (`text`, `value`, `content`, Assistants' `{text: {value}}`). */
function partText(part: Record<string, unknown>): string | undefined {
  for (const key of ["text", "value", "content"]) {
    const v = part[key];
    if (typeof v === "string") return v;
    if (isRecord(v) && typeof v.value === "string") return v.value;
  }
  return undefined;
}

/** Thinking text: `thinking`, `reasoning`, the usual text fields, or a Responses-API `summary` list. */
function thinkingText(part: Record<string, unknown>): string {
  for (const key of ["thinking", "reasoning", "text", "value", "content"]) if (typeof part[key] === "string") return part[key] as string;
  if (Array.isArray(part.summary)) {
    return part.summary.map((s) => (isRecord(s) ? (partText(s) ?? "") : typeof s === "string" ? s : "")).filter(Boolean).join("\n");
  }
  return "";
}

/** Fields a content part may hold its call in as JSON text (LLaMA-Factory's `{"type": "tool_call", "value": "{\"name\": …}"}`). */
const callTextKeys = ["value", "text", "content"] as const;

export function toolCallStep(call: unknown): Record<string, unknown> {
  if (typeof call === "string") {
    const parsed = parseMaybeJson(call);
    return isRecord(parsed) ? toolCallStep(parsed) : { tool_call: call };
  }
  if (!isRecord(call)) return { tool_call: call };
  if (!isRecord(call.function) && typeof call.function !== "string" && typeof call.name !== "string") {
    for (const key of callTextKeys) {
      const parsed = parseMaybeJson(call[key]);
      if (isRecord(parsed) && (typeof parsed.name === "string" || isRecord(parsed.function))) {
        const step = toolCallStep(parsed);
        const id = call.id ?? call.call_id ?? call.tool_call_id;
        if (typeof id === "string" && isRecord(step.tool_call) && step.tool_call.id === undefined) step.tool_call.id = id;
        return step;
      }
    }
    // No name anywhere: keep what the part holds (without its type), so validation can say where the call is.
    const { type: _type, ...held } = call;
    if (callTextKeys.some((k) => typeof held[k] === "string")) return { tool_call: held };
  }
  const fn = isRecord(call.function) ? call.function : call;
  const args = fn.arguments ?? fn.input ?? fn.args ?? fn.parameters ?? {};
  // Inspect AI: `function` is the tool's name and `arguments` sits next to it.
  const name = typeof call.function === "string" && fn.name === undefined ? call.function : fn.name;
  const toolCall: Record<string, unknown> = { name, arguments: parseMaybeJson(args) };
  const id = call.id ?? call.call_id ?? call.tool_call_id;
  if (typeof id === "string") toolCall.id = id;
  return { tool_call: toolCall };
}

/** A tool result's value: text blocks joined, JSON strings parsed, anything else as it is. */
function resultValue(value: unknown): unknown {
  if (Array.isArray(value) && value.length > 0 && value.every((b) => isRecord(b) && typeof partText(b) === "string")) {
    return (value as Array<Record<string, unknown>>).map((b) => partText(b)).join("\n");
  }
  return parseMaybeJson(value ?? "");
}

function toolResultStep(part: Record<string, unknown>): Record<string, unknown> {
  const value = part.content ?? part.output ?? part.result ?? part.value ?? part.text ?? part.response;
  // Anthropic's (and Claude Code's) `is_error: true` on a failed call: kept beside the result's content, so what
  // reads results (the tool_error check) sees that the call failed. A result without the flag is stored as it was.
  if (part.is_error === true || part.isError === true) return { tool_result: { content: resultValue(value), is_error: true } };
  return { tool_result: resultValue(value) };
}

/** `functionCall` → `function_call`: a part's kind under either spelling. */
const snake = (t: string) => t.replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/-/g, "_").toLowerCase();

/**
 * A part as `{type, …}`: typed parts as they are; a part tagged by its one object-valued key instead of a `type`
 * (Gemini's `{functionCall: {name, args}}`, `{functionResponse: {name, response}}`) as that key's value with the
 * key as its type. Types are compared in snake case (`functionCall` is `function_call`).
 */
function typedPart(part: Record<string, unknown>): { type: string; part: Record<string, unknown> } {
  if (typeof part.type === "string") return { type: part.type, part };
  if (partText(part) === undefined) {
    const tagged = Object.keys(part).filter((k) => isRecord(part[k]));
    if (tagged.length === 1) return { type: snake(tagged[0]), part: { ...(part[tagged[0]] as Record<string, unknown>) } };
  }
  return { type: "", part };
}

const resultKinds = new Set([...toolResultTypes, "function_response", "tool_response"]);
const callKinds = new Set([...toolCallTypes, "function_call"]);

/**
 * A part that is a tool's call under a type of its own (the AI SDK's `tool-<name>` and `dynamic-tool` parts): a
 * call id with its input, the name from `toolName` or the type; with its output (or error) when it has one.
 */
function namedToolPart(type: string, part: Record<string, unknown>): Record<string, unknown>[] | undefined {
  const id = part.toolCallId ?? part.tool_call_id ?? part.call_id;
  const input = part.input ?? part.args ?? part.arguments;
  if (typeof id !== "string" || input === undefined) return undefined;
  const name = typeof part.toolName === "string" ? part.toolName : typeof part.name === "string" ? part.name : type.replace(/^tool[-_]/, "");
  if (!name) return undefined;
  const steps: Record<string, unknown>[] = [{ tool_call: { name, arguments: parseMaybeJson(input), id } }];
  const output = part.output ?? part.result ?? (typeof part.errorText === "string" ? { error: part.errorText } : undefined);
  if (output !== undefined) steps.push({ tool_result: resultValue(output) });
  return steps;
}

/**
 * Message content → pieces: a string is one text; an array of parts gives text (consecutive text
 * parts joined by a newline, media as a placeholder) and steps. Undefined when the content is neither,
 * so the message goes on unconverted and validation names the fault.
 */
export function readContent(content: unknown): Piece[] | undefined {
  if (content === null || content === undefined) return [];
  if (typeof content === "string") return content ? [{ kind: "text", text: content }] : [];
  if (!Array.isArray(content)) return undefined;
  const pieces: Piece[] = [];
  const addText = (text: string) => {
    if (!text) return;
    const last = pieces[pieces.length - 1];
    if (last?.kind === "text") last.text += `\n${text}`;
    else pieces.push({ kind: "text", text });
  };
  for (const part of content) {
    if (typeof part === "string") {
      addText(part);
      continue;
    }
    if (!isRecord(part)) return undefined;
    const { type, part: body } = typedPart(part);
    const kind = snake(type);
    if (thinkingTypes.has(type) || (part.thought === true && typeof part.text === "string")) {
      const text = thinkingText(part);
      if (text) pieces.push({ kind: "step", step: { thinking: text } });
    } else if (toolCallTypes.has(type) || callKinds.has(kind)) pieces.push({ kind: "step", step: toolCallStep(body) });
    else if (toolResultTypes.has(type) || resultKinds.has(kind)) pieces.push({ kind: "step", step: toolResultStep(body) });
    else if (type && !textTypes.has(type) && namedToolPart(type, body)) for (const step of namedToolPart(type, body) ?? []) pieces.push({ kind: "step", step });
    else if (type === "refusal" && typeof part.refusal === "string") addText(part.refusal);
    else if (own(placeholders, type)) addText(placeholders[type]);
    else {
      // A text part, or a type we do not know that still carries text: keep the text rather than drop it.
      const text = partText(part);
      if (text !== undefined) addText(text);
      // A part that is only its type (the AI SDK's `step-start` boundary) says nothing: no placeholder.
      else if (!textTypes.has(type) && type && Object.keys(part).length > 1) addText(`[${type}]`);
    }
  }
  return pieces;
}

/** True when every part of a content array is a tool result (Anthropic sends tool results as a user message). */
function onlyToolResults(content: unknown): boolean {
  return Array.isArray(content) && content.length > 0 && content.every((p) => isRecord(p) && resultKinds.has(snake(typedPart(p).type)));
}

/** Read one file message; undefined when it is not one we can convert (it is passed on as it is). */
function readMessage(m: unknown): ReadMessage | undefined {
  if (!isRecord(m)) return undefined;
  const sharegpt = typeof m.role !== "string" && typeof m.from === "string";
  const rawRole = sharegpt ? (m.from as string) : m.role;
  if (typeof rawRole !== "string") return undefined;
  const content = sharegpt ? m.value : m.content;

  if (sharegpt && rawRole === "function_call") {
    // LLaMA-Factory: the value is the call as JSON text ({name, arguments}), or a list of calls.
    const call = parseMaybeJson(content);
    const calls = Array.isArray(call) ? call : [call];
    const steps: Piece[] = isRecord(calls[0]) ? calls.map((c) => ({ kind: "step", step: toolCallStep(c) })) : [{ kind: "text", text: String(content ?? "") }];
    return { role: "assistant", pieces: steps, toolReply: false };
  }
  const pieces = readContent(content);
  if (!pieces) return undefined;
  let role = sharegpt ? (Object.prototype.hasOwnProperty.call(sharegptRoles, rawRole.toLowerCase()) ? sharegptRoles[rawRole.toLowerCase()] : rawRole) : rawRole;
  if (role === "developer") role = "system";
  const toolReply = role === "tool" || role === "function" || (role === "user" && onlyToolResults(content));
  if (role === "tool" || role === "function") {
    role = "tool";
    // A tool message's text is the result itself.
    const value = sharegpt || typeof content === "string" ? parseMaybeJson(content ?? "") : resultValue(content);
    const steps = pieces.filter((p) => p.kind === "step");
    pieces.splice(0, pieces.length, ...(steps.length ? steps : [{ kind: "step" as const, step: { tool_result: value } }]));
  }
  const before: Piece[] = [];
  const reasoning = m.reasoning_content ?? m.reasoning ?? m.thinking;
  if (typeof reasoning === "string" && reasoning) before.push({ kind: "step", step: { thinking: reasoning } });
  // SWE-agent keeps the model's reasoning in `thought` (often the content again: then it is not repeated).
  if (typeof m.thought === "string" && m.thought && m.thought !== content && m.thought !== reasoning) before.push({ kind: "step", step: { thinking: m.thought } });
  const after: Piece[] = [];
  if (Array.isArray(m.tool_calls)) for (const call of m.tool_calls) after.push({ kind: "step", step: toolCallStep(call) });
  if (isRecord(m.function_call)) after.push({ kind: "step", step: toolCallStep(m.function_call) });
  // SWE-agent: the call as the command line the agent ran (`action`) stays with the call.
  const calls = after.filter((p) => p.kind === "step" && isRecord(p.step.tool_call));
  if (typeof m.action === "string" && calls.length === 1) {
    const step = (calls[0] as { step: Record<string, unknown> }).step;
    step.tool_call = { ...(step.tool_call as Record<string, unknown>), action: m.action };
  }
  const all = [...before, ...pieces, ...after];
  // The agent that wrote a message (multi-agent logs: `agent`, `agent_name`) names each of its steps.
  const agent = typeof m.agent === "string" ? m.agent : typeof m.agent_name === "string" ? m.agent_name : undefined;
  if (agent) for (const p of all) if (p.kind === "step" && p.step.agent_name === undefined) p.step.agent_name = agent;
  const meta: Record<string, unknown> = isRecord(m.meta) ? { ...m.meta } : {};
  if (typeof m.name === "string") meta.name = m.name;
  if (agent) meta.agent = agent;
  return { role, pieces: all, meta: Object.keys(meta).length ? meta : undefined, toolReply };
}

/**
 * An assistant turn being built from file messages: the assistant's, and the tool replies between them.
 * `metas`: the meta of each of those messages that has one, with the piece it starts at.
 */
type Turn = { message: Record<string, unknown>; pieces: Piece[]; metas: Array<{ role: string; piece: number; first: boolean; meta: Record<string, unknown> }> };

/**
 * The turn's meta: its first message's, as it is. When any later message of the turn (another model call,
 * a tool reply) has meta too, every one of them is kept in order under `turn_messages` — its role, the step
 * it starts at (when the turn has steps), its meta — so no call's usage, model or time is dropped.
 */
function turnMeta(turn: Turn, hasSteps: boolean): void {
  const [first] = turn.metas;
  if (!first) return;
  const own = first.first ? first.meta : {};
  if (turn.metas.length === 1 && first.first) turn.message.meta = own;
  else turn.message.meta = { ...own, turn_messages: turn.metas.map((m) => ({ role: m.role, ...(hasSteps ? { first_step: m.piece } : {}), meta: m.meta })) };
}

function finishTurn(turn: Turn): void {
  const texts = turn.pieces.filter((p): p is Extract<Piece, { kind: "text" }> => p.kind === "text").map((p) => p.text);
  const hasSteps = turn.pieces.some((p) => p.kind === "step");
  turnMeta(turn, hasSteps);
  if (!hasSteps) {
    turn.message.content = texts.length ? texts.join("\n\n") : null;
    return;
  }
  turn.message.content = texts.length ? texts[texts.length - 1] : null;
  turn.message.steps = turn.pieces.map((p) => (p.kind === "text" ? { output_content: p.text } : p.step));
}

/**
 * Convert one conversation's file messages to Turnscope messages. `sources[j]` is the index of the
 * file message that converted message j starts at, so issues and lost text can point into the file.
 */
export function convertMessages(messages: unknown[]): { messages: unknown[]; sources: MessageSource[] } {
  const out: unknown[] = [];
  const sources: MessageSource[] = [];
  let turn: Turn | undefined;
  const close = () => {
    if (turn) finishTurn(turn);
    turn = undefined;
  };
  messages.forEach((m, index) => {
    const read = readMessage(m);
    if (!read) {
      close();
      out.push(m);
      sources.push(index);
      return;
    }
    if (read.role === "assistant") {
      const first = !turn;
      if (!turn) {
        turn = { message: { role: "assistant" }, pieces: [], metas: [] };
        out.push(turn.message);
        sources.push(index);
      }
      if (read.meta) turn.metas.push({ role: read.role, piece: turn.pieces.length, first, meta: read.meta });
      turn.pieces.push(...read.pieces);
      return;
    }
    if (read.toolReply && turn) {
      // A tool reply's `name` is its function's, which the call step names already.
      const { name: _function, ...meta } = read.meta ?? {};
      if (Object.keys(meta).length) turn.metas.push({ role: read.role, piece: turn.pieces.length, first: false, meta });
      turn.pieces.push(...read.pieces.map((p): Piece => (p.kind === "text" ? { kind: "step", step: { tool_result: p.text } } : p)));
      return;
    }
    close();
    const texts = read.pieces.filter((p) => p.kind === "text").map((p) => (p as { text: string }).text);
    const steps = read.pieces.filter((p) => p.kind === "step").map((p) => (p as { step: Record<string, unknown> }).step);
    const message: Record<string, unknown> = { role: read.role, content: texts.length ? texts.join("\n\n") : null };
    if (read.role === "tool" && !texts.length && steps.length === 1 && "tool_result" in steps[0]) {
      // A tool reply outside an assistant turn stays a tool message with its output as the text.
      const value = steps[0].tool_result;
      message.content = typeof value === "string" ? value : JSON.stringify(value);
    } else if (steps.length) message.steps = steps;
    if (read.meta) message.meta = read.meta;
    out.push(message);
    sources.push(index);
  });
  close();
  return { messages: out, sources };
}

/** Declared tools (`[{type: "function", function}]`, Anthropic `[{name, input_schema}]`, or their JSON text) as one agent. */
export function toolsAsAgents(tools: unknown): unknown[] | undefined {
  const list = parseMaybeJson(tools);
  if (!Array.isArray(list)) return undefined;
  const entries = list
    .map((t) => (isRecord(t) && isRecord(t.function) ? t.function : t))
    .filter((f): f is Record<string, unknown> => isRecord(f) && typeof f.name === "string")
    .map((f) => [f.name as string, { name: f.name, description: f.description, parameters: f.parameters ?? f.input_schema }] as const);
  return entries.length ? [{ name: "assistant", tools: Object.fromEntries(entries) }] : undefined;
}

/** A record's `system` (a string, or Anthropic's list of text blocks) as text. */
export function systemText(system: unknown): string | undefined {
  if (typeof system === "string") return system || undefined;
  const pieces = readContent(system);
  const text = pieces?.filter((p) => p.kind === "text").map((p) => (p as { text: string }).text).join("\n");
  return text || undefined;
}
