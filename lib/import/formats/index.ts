/**
 * Which format a parsed upload is in, and its conversion to the Turnscope shape
 * (`{conversations: [{messages: [...]}]}`). Detection looks only at the content, never at the file
 * name: first the container (a Turnscope file, one record, an array of records or of messages, JSON
 * Lines, CSV), then the message dialect of the records (one adapter per file in this folder).
 * A shape no adapter recognises is handed on unchanged with no format named, and structure
 * validation explains what is wrong.
 */
import type { ImportFormat } from "@/lib/schemas/imports";
import { isRecord } from "../issues";
import type { ParseResult } from "../parse";
import { convertCsv } from "./csv";
import { conversationKeyOf, convertRecord, dialectOf, isMessageLike, type Dialect } from "./records";
import type { Normalised } from "./normalised";
import type { ConversationSource } from "./source-paths";
import { normaliseWholeFile } from "./whole-file";

export type { Normalised } from "./normalised";

/**
 * Where each format of the import's list is read — a format added to the list without a reader here does
 * not compile: `container` by normaliseUpload below (the file's own shape), `record dialect` by records.ts
 * record by record, `whole file` by a reader of whole-file.ts's registry (whole-file.test.ts checks that its
 * readers name exactly these), `markdown` by aider-history.ts, `archive` by joined-files.ts (a ZIP's members
 * joined), `mapping` by a mapping the user gave or accepted (formats/mapping.ts, lib/import/mapping).
 */
export const formatPlaces = {
  turnscope: "container",
  jsonl: "container",
  records: "container",
  csv: "container",
  openai_chat: "record dialect",
  sharegpt: "record dialect",
  anthropic_messages: "record dialect",
  content_parts: "record dialect",
  coding_agent_session: "whole file",
  message_tree: "whole file",
  swe_agent_trajectory: "whole file",
  agent_events: "whole file",
  eval_log: "whole file",
  codex_rollout: "whole file",
  tau2_results: "whole file",
  smolagents_run: "whole file",
  smolagents_memory: "whole file",
  langsmith_runs: "whole file",
  ai_sdk_ui_messages: "whole file",
  openai_responses: "whole file",
  gemini_contents: "whole file",
  atif: "whole file",
  aider_history: "markdown",
  joined_files: "archive",
  mapping: "mapping",
} as const satisfies Record<ImportFormat, "container" | "record dialect" | "whole file" | "markdown" | "archive" | "mapping">;

type Parsed = Extract<ParseResult, { ok: true }>;
type Unit = { value: unknown; path: string; line?: number };

function messagesOfUnit(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (!isRecord(value)) return [];
  const key = conversationKeyOf(value);
  const messages = key ? value[key] : undefined;
  return Array.isArray(messages) ? messages : [];
}

/**
 * The file's dialect: the most specific one any unit shows (OpenAI's markers — typed content parts —
 * are shared by Anthropic files whose first conversations have only text); a file with Turnscope
 * steps stays plain.
 */
function fileDialect(units: Unit[]): Dialect {
  let found: Dialect = "plain";
  for (const u of units) {
    const messages = messagesOfUnit(u.value);
    if (messages.some((m) => isRecord(m) && "steps" in m)) return "plain";
    if (found === "plain" || found === "openai_chat") {
      const dialect = dialectOf(messages, isRecord(u.value) ? u.value : undefined);
      if (dialect !== "plain") found = dialect;
    }
  }
  return found;
}

function messagesPathOf(unit: Unit): string {
  if (Array.isArray(unit.value)) return unit.path;
  const key = isRecord(unit.value) ? (conversationKeyOf(unit.value) ?? "messages") : "messages";
  return unit.path ? `${unit.path}.${key}` : key;
}

/** Convert every unit in the file's dialect, remembering where each conversation and message sits in the file. */
function convertUnits(units: Unit[], container: "turnscope" | "jsonl" | "records" | "one"): Normalised {
  const dialect = fileDialect(units);
  const conversations: unknown[] = [];
  let moved = false;
  const sources: ConversationSource[] = units.map((unit) => {
    const converted = convertRecord(unit.value, dialect);
    conversations.push(converted.conversation);
    if (converted.movedToMeta) moved = true;
    return {
      path: unit.path,
      messagesPath: messagesPathOf(unit),
      messageSources: converted.messageSources,
      line: unit.line,
      raw: unit.value,
      rawMessages: converted.rawMessages,
    };
  });
  let format: ImportFormat;
  if (dialect !== "plain") format = container === "jsonl" && dialect === "openai_chat" ? "jsonl" : dialect;
  else if (container === "jsonl") format = "jsonl";
  else if (container === "records" || moved) format = "records";
  else format = "turnscope";
  return { format, data: { conversations }, sources };
}

/** A message list of any dialect (not a list of records). */
function isMessageList(value: unknown[]): boolean {
  return value.length > 0 && value.every((m) => isMessageLike(m) && !("messages" in (m as object)));
}

/** Detect the format of a parsed upload and convert it to the Turnscope shape. */
export function normaliseUpload(parsed: Parsed): Normalised {
  // Agent logs, message trees and eval logs are recognised by their whole shape before any record reading.
  const whole = normaliseWholeFile(parsed);
  if (whole) return whole;
  if (parsed.kind === "csv") {
    const csv = convertCsv(parsed.table);
    const sources = csv.lines.map((lines) => ({ path: "", messagesPath: "", messageLines: lines }));
    return { format: "csv", data: csv.data, sources, errors: csv.errors };
  }
  if (parsed.kind === "jsonl") {
    const units = parsed.lines.map((l) => ({ value: l.value, path: "", line: l.line }));
    const converted = convertUnits(units, "jsonl");
    // Lines none of which is or holds a message list (judge records, preference pairs, `[kind, payload]` event
    // arrays): no adapter read them, so none is named, and the structural reader searches (issue 49).
    const holdsMessages = (v: unknown) => (Array.isArray(v) ? isMessageList(v) : isRecord(v) && (conversationKeyOf(v) !== undefined || isMessageLike(v)));
    if (units.length && !units.some((u) => holdsMessages(u.value))) return { ...converted, format: undefined };
    return converted;
  }

  const root = parsed.value;
  if (isRecord(root) && Array.isArray(root.conversations) && !isMessageList(root.conversations)) {
    const units = root.conversations.map((value, i) => ({ value, path: `conversations[${i}]` }));
    const converted = convertUnits(units, "turnscope");
    // Records without any message list are not something an adapter read: name no format for them.
    if (units.length && units.every((u) => isRecord(u.value) && !conversationKeyOf(u.value))) return { data: root };
    // A Turnscope file keeps its own paths: the converted shape is the file's shape.
    if (converted.format === "turnscope") return { ...converted, data: { ...root, conversations: (converted.data as { conversations: unknown[] }).conversations } };
    return converted;
  }
  // One conversation on its own: a Turnscope conversation, a request body, a ShareGPT or trajectory record.
  if (isRecord(root) && conversationKeyOf(root)) return convertUnits([{ value: root, path: "" }], "one");
  if (Array.isArray(root) && root.length > 0) {
    // A bare message list is one conversation.
    if (isMessageList(root)) return convertUnits([{ value: root, path: "" }], "one");
    const units = root.map((value, i) => ({ value, path: `[${i}]` }));
    const readable = root.every((c) => (Array.isArray(c) && isMessageList(c)) || (isRecord(c) && conversationKeyOf(c)));
    if (readable) {
      const converted = convertUnits(units, "records");
      // Lists of message lists (or of {messages}) in the OpenAI dialect are named as before.
      return converted;
    }
    if (root.every(isRecord)) {
      // Records with no message list anywhere: validation names the missing field once per fault group.
      return { data: { conversations: root }, sources: units.map((u) => ({ path: u.path, messagesPath: `${u.path}.messages`, raw: u.value })) };
    }
  }
  return { data: root };
}
