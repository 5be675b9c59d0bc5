/**
 * Which format a parsed upload is in, and its conversion to the Turnscope shape
 * (`{conversations: [{messages: [...]}]}`). Detection looks only at the shape, never at the file name.
 * A shape no adapter recognises is handed on unchanged, and structure validation explains what is wrong.
 */
import type { ImportFormat } from "@/lib/schemas/imports";
import { isRecord } from "../issues";
import type { ParseResult } from "../parse";
import { convertChatConversation, hasOpenAiMarkers, isChatMessage } from "./openai-chat";
import type { ConversationSource } from "./source-paths";

export type Normalised = {
  format: ImportFormat;
  /** The upload in the Turnscope shape, still unvalidated. */
  data: unknown;
  /** Where each conversation sits in the file, when that differs from the Turnscope shape. */
  sources?: ConversationSource[];
};

type Parsed = Extract<ParseResult, { ok: true }>;

function messagesOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  return isRecord(value) && Array.isArray(value.messages) ? value.messages : [];
}

function hasNativeSteps(conversations: unknown[]): boolean {
  return conversations.some((c) => messagesOf(c).some((m) => isRecord(m) && "steps" in m));
}

/** Conversations that look like chat-completions conversations (markers, and no Turnscope steps). */
function isOpenAiFlavoured(conversations: unknown[]): boolean {
  return !hasNativeSteps(conversations) && conversations.some((c) => hasOpenAiMarkers(messagesOf(c)));
}

/** Convert each chat conversation, remembering where it and its messages sit in the file. */
function convertAll(values: unknown[], pathOf: (i: number) => string, line?: (i: number) => number): Normalised {
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = values.map((value, i) => {
    const converted = convertChatConversation(value);
    conversations.push(converted.conversation);
    const path = pathOf(i);
    const messagesPath = Array.isArray(value) ? path : path ? `${path}.messages` : "messages";
    return { path, messagesPath, messageSources: converted.sources, line: line?.(i) };
  });
  return { format: "openai_chat", data: { conversations }, sources };
}

/** Detect the format of a parsed upload and convert it to the Turnscope shape. */
export function normaliseUpload(parsed: Parsed): Normalised {
  if (parsed.kind === "jsonl") {
    const values = parsed.lines.map((l) => l.value);
    const lineOf = (i: number) => parsed.lines[i].line;
    if (isOpenAiFlavoured(values) || values.some(Array.isArray)) return { ...convertAll(values, () => "", lineOf), format: "jsonl" };
    const sources = values.map((_, i) => ({ path: "", messagesPath: "messages", line: lineOf(i) }));
    return { format: "jsonl", data: { conversations: values }, sources };
  }

  const root = parsed.value;
  if (isRecord(root) && Array.isArray(root.conversations)) {
    if (!isOpenAiFlavoured(root.conversations)) return { format: "turnscope", data: root };
    return convertAll(root.conversations, (i) => `conversations[${i}]`);
  }
  // One conversation on its own: a Turnscope conversation object or a chat-completions request body.
  if (isRecord(root) && !("conversations" in root) && Array.isArray(root.messages)) {
    if (isOpenAiFlavoured([root]) || "model" in root || "tools" in root) return convertAll([root], () => "");
    return { format: "turnscope", data: { conversations: [root] }, sources: [{ path: "", messagesPath: "messages" }] };
  }
  if (Array.isArray(root) && root.length > 0) {
    // A bare chat-completions message list is one conversation.
    if (root.every(isChatMessage)) return convertAll([root], () => "");
    // A list of message lists, or of {messages} objects (the fine-tuning shape), is many.
    const many = root.every((c) => (Array.isArray(c) && c.every(isChatMessage)) || (isRecord(c) && Array.isArray(c.messages)));
    if (many && !hasNativeSteps(root)) return convertAll(root, (i) => `[${i}]`);
  }
  return { format: "turnscope", data: root };
}
