/**
 * Conversations as three SDKs keep them, each read by its documented shape:
 *
 * - `ai_sdk_ui_messages`: the Vercel AI SDK's `UIMessage[]` (what `useChat` holds and apps store):
 *   `{id, role, parts, metadata?}` with parts `text`, `reasoning`, `tool-<name>` / `dynamic-tool`
 *   (`toolCallId`, `input`, `state`, `output` or `errorText`), `source-url`, `file`, `data-*`, `step-start`.
 *   A tool part is a call and, once it has one, its result, in the order the parts came.
 * - `openai_responses`: OpenAI Responses API items (`input` or `output` lists, or a response object):
 *   `message` (or `{role, content}`), `reasoning` with its `summary`, `function_call` / `custom_tool_call`
 *   and their `*_output` paired by `call_id`, and the built-in tools' `*_call` items.
 * - `gemini_contents`: Gemini `generateContent` bodies, `{systemInstruction?, contents: [{role, parts}]}`,
 *   role `model` the assistant, parts `text` (`thought: true` is reasoning), `functionCall`,
 *   `functionResponse`, `executableCode` / `codeExecutionResult`, inline or file data.
 *
 * Each becomes the chat messages the shared reader folds into turns (turns.ts); a file of several
 * conversations is a list of them, or of records holding one under `messages` / `contents` / `input`.
 */
import { isRecord } from "../issues";
import type { Normalised } from "./normalised";
import type { ConversationSource } from "./source-paths";
import { partsText } from "./text-parts";
import { convertMessages } from "./turns";

type Rec = Record<string, unknown>;
type Unit = { value: unknown; path: string; line?: number };
type Kind = "ai_sdk_ui_messages" | "openai_responses" | "gemini_contents";
type Read = { messages: Rec[]; meta?: Rec; name?: string };

const str = (v: unknown): v is string => typeof v === "string";

// ── AI SDK UIMessage ──────────────────────────────────────────────────────────────────────────────

// `tool-invocation` and `source` are AI SDK 4's parts (its messages also carry `content`, a copy of the text parts).
const uiPartTypes = new Set(["text", "reasoning", "step-start", "dynamic-tool", "source-url", "source-document", "file", "tool-invocation", "source"]);
const isUiPart = (p: unknown) => isRecord(p) && str(p.type) && (uiPartTypes.has(p.type) || p.type.startsWith("tool-") || p.type.startsWith("data-"));

function isUiMessage(m: unknown): boolean {
  return isRecord(m) && str(m.role) && Array.isArray(m.parts) && m.parts.length > 0 && m.parts.every(isUiPart);
}

/** A plain `{role, content}` message an app keeps beside its UI messages (a system prompt, say). */
const isPlainMessage = (m: unknown) => isRecord(m) && str(m.role) && str(m.content) && !("parts" in m);

/** A UI message list: UI messages, perhaps with plain ones among them. */
const isUiMessageList = (list: unknown[]) => list.length > 0 && list.some(isUiMessage) && list.every((m) => isUiMessage(m) || isPlainMessage(m));

/** A tool's result as the text a tool message holds. */
const asText = (value: unknown) => (str(value) ? value : JSON.stringify(value ?? ""));

function readUiMessages(list: unknown[]): Read {
  const messages: Rec[] = [];
  for (const m of list as Rec[]) {
    if (!isUiMessage(m)) {
      messages.push({ role: m.role, content: m.content });
      continue;
    }
    const meta: Rec = {};
    if (m.metadata !== undefined) meta.metadata = m.metadata;
    if (m.createdAt !== undefined) meta.created_at = m.createdAt;
    const role = m.role as string;
    const start = messages.length;
    let parts: unknown[] = [];
    const flush = () => {
      if (parts.length) messages.push({ role, content: parts });
      parts = [];
    };
    for (const p of m.parts as Rec[]) {
      const type = p.type as string;
      if (type === "text") parts.push({ type: "text", text: p.text });
      else if (type === "reasoning") parts.push({ type: "reasoning", text: p.text ?? p.reasoning });
      else if (type === "step-start") continue;
      else if (type === "source") parts.push({ type: "text", text: `[source] ${isRecord(p.source) ? [p.source.title, p.source.url].filter(str).join(" ") : ""}` });
      else if (type === "source-url" || type === "source-document") parts.push({ type: "text", text: `[source] ${[p.title, p.url ?? p.filename].filter(str).join(" ")}` });
      else if (type === "file") parts.push({ type: "text", text: `[file] ${[p.filename, p.url].filter(str).join(" ")}` });
      else if (type.startsWith("data-")) (meta.data_parts = (meta.data_parts as unknown[] | undefined) ?? []).push(p);
      else {
        // tool-<name>, dynamic-tool or (AI SDK 4) tool-invocation: the call, then (once it has one) its result.
        const t = type === "tool-invocation" && isRecord(p.toolInvocation) ? p.toolInvocation : p;
        const name = type === "dynamic-tool" || type === "tool-invocation" ? t.toolName : type.slice("tool-".length);
        parts.push({ type: "tool_call", id: t.toolCallId, name, arguments: t.input ?? t.args ?? {} });
        const result = "output" in t ? t.output : "result" in t ? t.result : str(t.errorText) ? { error: t.errorText } : undefined;
        if (result !== undefined) {
          flush();
          messages.push({ role: "tool", tool_call_id: t.toolCallId, content: asText(result) });
        }
      }
    }
    flush();
    // On the UI message's first file message: the turn it starts keeps it.
    if (Object.keys(meta).length && messages[start]) messages[start].meta = meta;
  }
  return { messages };
}

// ── OpenAI Responses items ────────────────────────────────────────────────────────────────────────

const responsesOnly = new Set(["function_call", "function_call_output", "reasoning", "custom_tool_call", "custom_tool_call_output", "web_search_call", "file_search_call", "computer_call", "computer_call_output", "code_interpreter_call", "local_shell_call", "local_shell_call_output", "mcp_call", "image_generation_call"]);
const isResponsesItem = (i: unknown) => isRecord(i) && ((str(i.type) && (i.type === "message" || responsesOnly.has(i.type) || i.type.endsWith("_call") || i.type.endsWith("_call_output"))) || (i.type === undefined && str(i.role)));

function isResponsesItems(list: unknown[]): boolean {
  return list.length > 0 && list.every(isResponsesItem) && list.some((i) => isRecord(i) && ((str(i.type) && responsesOnly.has(i.type)) || (Array.isArray(i.content) && i.content.some((c) => isRecord(c) && (c.type === "input_text" || c.type === "output_text")))));
}

/**
 * A Responses API tool item as chat messages, or undefined when the item is not one: a `*_call` is the call
 * (a built-in tool's item also holds its result: mcp_call's output, file search results, the interpreter's
 * outputs), a `*_call_output` the result of the call it names. Codex rollouts write the same items
 * (lib/import/formats/codex-rollout.ts).
 */
export function responsesToolItem(item: Rec): Rec[] | undefined {
  const type = item.type;
  if (!str(type)) return undefined;
  if (type.endsWith("_call_output")) return [{ role: "tool", tool_call_id: item.call_id, content: asText(item.output) }];
  if (!type.endsWith("_call")) return undefined;
  const name = str(item.name) ? item.name : type.replace(/_call$/, "");
  const args = type === "function_call" || type === "mcp_call" ? item.arguments : type === "custom_tool_call" ? { input: item.input } : (item.action ?? item.queries ?? item.code ?? {});
  const messages: Rec[] = [{ role: "assistant", content: null, tool_calls: [{ id: item.call_id ?? item.id, function: { name, arguments: args ?? {} } }] }];
  const result = item.output ?? item.results ?? item.outputs ?? item.result;
  if (result !== undefined && result !== null) messages.push({ role: "tool", tool_call_id: item.call_id ?? item.id, content: asText(result) });
  return messages;
}

function readResponsesItems(items: unknown[]): Read {
  const messages: Rec[] = [];
  for (const item of items as Rec[]) {
    const type = item.type;
    if (type === undefined || type === "message") messages.push({ role: item.role === "developer" ? "system" : item.role, content: item.content ?? null });
    else if (type === "reasoning") messages.push({ role: "assistant", content: [{ type: "reasoning", summary: item.summary ?? [], ...(Array.isArray(item.content) ? { text: partsText(item.content) || undefined } : {}) }] });
    else messages.push(...(responsesToolItem(item) ?? []));
  }
  return { messages };
}

// ── Gemini contents ───────────────────────────────────────────────────────────────────────────────

const geminiPartKeys = ["text", "functionCall", "functionResponse", "inlineData", "fileData", "executableCode", "codeExecutionResult"];
const isGeminiContent = (c: unknown) =>
  isRecord(c) && (c.role === undefined || c.role === "user" || c.role === "model" || c.role === "function") && Array.isArray(c.parts) && c.parts.length > 0 && c.parts.every((p) => isRecord(p) && !("type" in p) && geminiPartKeys.some((k) => k in p));

function readGeminiContents(contents: unknown[], systemInstruction?: unknown): Read {
  const messages: Rec[] = [];
  const system = isRecord(systemInstruction) && Array.isArray(systemInstruction.parts) ? systemInstruction.parts.map((p) => (isRecord(p) && str(p.text) ? p.text : "")).join("\n") : str(systemInstruction) ? systemInstruction : "";
  if (system) messages.push({ role: "system", content: system });
  for (const c of contents as Rec[]) {
    const role = c.role === "model" ? "assistant" : "user";
    let parts: unknown[] = [];
    const flush = () => {
      if (parts.length) messages.push({ role, content: parts });
      parts = [];
    };
    for (const p of c.parts as Rec[]) {
      if (str(p.text)) parts.push(p.thought === true ? { type: "reasoning", text: p.text } : { type: "text", text: p.text });
      else if (isRecord(p.functionCall)) parts.push({ type: "tool_call", id: p.functionCall.id, name: p.functionCall.name, arguments: p.functionCall.args ?? {} });
      else if (isRecord(p.executableCode)) parts.push({ type: "tool_call", name: "code_execution", arguments: p.executableCode });
      else if (isRecord(p.functionResponse) || isRecord(p.codeExecutionResult)) {
        flush();
        const r = (p.functionResponse ?? p.codeExecutionResult) as Rec;
        const value = isRecord(p.functionResponse) ? r.response : r;
        messages.push({ role: "tool", tool_call_id: r.id, content: asText(value) });
      } else if (isRecord(p.inlineData) || isRecord(p.fileData)) {
        const d = (p.inlineData ?? p.fileData) as Rec;
        parts.push({ type: "text", text: `[file${str(d.mimeType) ? ` ${d.mimeType}` : ""}${str(d.fileUri) ? ` ${d.fileUri}` : ""}]` });
      }
    }
    flush();
  }
  return { messages };
}

// ── Detection and conversion ──────────────────────────────────────────────────────────────────────

/** One conversation of one of the three shapes: a message/item/content list, or a record holding one. */
function readOne(value: unknown): { kind: Kind; read: Read; used: string | null } | undefined {
  if (Array.isArray(value)) {
    if (isUiMessageList(value)) return { kind: "ai_sdk_ui_messages", read: readUiMessages(value), used: null };
    if (isResponsesItems(value)) return { kind: "openai_responses", read: readResponsesItems(value), used: null };
    if (value.length && value.every(isGeminiContent) && value.some((c) => isRecord(c) && c.role === "model")) return { kind: "gemini_contents", read: readGeminiContents(value), used: null };
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  if (Array.isArray(value.messages) && isUiMessageList(value.messages)) return { kind: "ai_sdk_ui_messages", read: readUiMessages(value.messages), used: "messages" };
  if (Array.isArray(value.contents) && value.contents.length && value.contents.every(isGeminiContent)) {
    return { kind: "gemini_contents", read: readGeminiContents(value.contents, value.systemInstruction ?? value.system_instruction), used: "contents" };
  }
  for (const key of ["input", "output", "items"] as const) {
    const list = value[key];
    if (Array.isArray(list) && isResponsesItems(list)) {
      // A response object: its `instructions` are the system message.
      const read = readResponsesItems(list);
      if (str(value.instructions) && value.instructions) read.messages.unshift({ role: "system", content: value.instructions });
      return { kind: "openai_responses", read, used: key };
    }
  }
  return undefined;
}

/** Fields of a record the conversation is read from, not kept as meta. */
const readFields = new Set(["messages", "contents", "systemInstruction", "system_instruction", "input", "output", "items", "instructions"]);

/** JSON Lines of UI messages, one per line (as apps store them, a row each): the file is one conversation. */
export function uiMessageLines(units: Unit[]): Unit[] | undefined {
  return units.length > 1 && isUiMessageList(units.map((u) => u.value)) ? [{ value: units.map((u) => u.value), path: "" }] : undefined;
}

/** The upload as these SDKs keep conversations, or undefined when it is not one of their shapes. */
export function readSdkMessages(units: Unit[]): Normalised | undefined {
  // The first unit decides (most files are none of these: one look, not a pass over the whole file).
  const first = units.length ? readOne(units[0].value) : undefined;
  if (!first) return undefined;
  const read = [first, ...units.slice(1).map((u) => readOne(u.value))];
  if (read.some((r) => !r || r.kind !== first.kind)) return undefined;
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  let total = 0;
  read.forEach((r, i) => {
    const unit = units[i];
    const converted = convertMessages(r!.read.messages);
    const conversation: Rec = { messages: converted.messages };
    if (isRecord(unit.value)) {
      const meta: Rec = {};
      for (const [k, v] of Object.entries(unit.value)) if (!readFields.has(k) && k !== "name") meta[k] = v;
      if (Object.keys(meta).length) conversation.meta = meta;
      if (str(unit.value.name)) conversation.name = unit.value.name;
    }
    const raw = r!.used && isRecord(unit.value) ? (unit.value[r!.used] as unknown[]) : (unit.value as unknown[]);
    total += raw.length;
    conversations.push(conversation);
    sources.push({ path: unit.path, messagesPath: r!.used ? `${unit.path ? `${unit.path}.` : ""}${r!.used}` : unit.path, line: unit.line, rawMessages: [unit.value], wholeConversation: true });
  });
  const unit = { ai_sdk_ui_messages: "UI messages", openai_responses: "response items", gemini_contents: "contents" }[first.kind];
  return {
    format: first.kind,
    data: { conversations },
    sources,
    structural: ["type", "role", "id", "toolCallId", "toolName", "state", "step", "createdAt", "toolInvocations", "call_id", "status", "providerExecuted", "encrypted_content", "mimeType", "thoughtSignature", "outcome", "language"],
    records: {
      inFile: total,
      unit: `${unit} in ${units.length} conversation${units.length === 1 ? "" : "s"}`,
      skipped: {},
      reasons: ["a tool call and its result became steps of the assistant turn they belong to; consecutive assistant items are one turn"],
    },
  };
}
