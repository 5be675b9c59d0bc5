/**
 * Which format a parsed upload is in, and its conversion to the Turnscope shape
 * (`{conversations: [{messages: [...]}]}`). Detection looks only at the shape, never at the file name.
 * A shape no adapter recognises is handed on unchanged, and structure validation explains what is wrong.
 */
import type { ImportFormat } from "@/lib/schemas/imports";
import { isRecord } from "../issues";
import type { ParseResult } from "../parse";
import { convertChatConversation, hasOpenAiMarkers, isChatMessage } from "./openai-chat";

export type Normalised = {
  format: ImportFormat;
  /** The upload in the Turnscope shape, still unvalidated. */
  data: unknown;
  /** For JSON Lines: the file line of each conversation, so issues can name it. */
  lines?: number[];
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

/** Detect the format of a parsed upload and convert it to the Turnscope shape. */
export function normaliseUpload(parsed: Parsed): Normalised {
  if (parsed.kind === "jsonl") {
    const values = parsed.lines.map((l) => l.value);
    const convert = isOpenAiFlavoured(values) || values.some(Array.isArray);
    const conversations = values.map((v) => (convert ? convertChatConversation(v) : v));
    return { format: "jsonl", data: { conversations }, lines: parsed.lines.map((l) => l.line) };
  }

  const root = parsed.value;
  if (isRecord(root) && Array.isArray(root.conversations)) {
    if (!isOpenAiFlavoured(root.conversations)) return { format: "turnscope", data: root };
    return { format: "openai_chat", data: { conversations: root.conversations.map(convertChatConversation) } };
  }
  // One conversation on its own: a Turnscope conversation object or a chat-completions request body.
  if (isRecord(root) && !("conversations" in root) && Array.isArray(root.messages)) {
    const openAi = isOpenAiFlavoured([root]) || "model" in root || "tools" in root;
    return openAi
      ? { format: "openai_chat", data: { conversations: [convertChatConversation(root)] } }
      : { format: "turnscope", data: { conversations: [root] } };
  }
  if (Array.isArray(root) && root.length > 0) {
    // A bare chat-completions message list is one conversation.
    if (root.every(isChatMessage)) return { format: "openai_chat", data: { conversations: [convertChatConversation(root)] } };
    // A list of message lists, or of {messages} objects (the fine-tuning shape), is many.
    const many = root.every((c) => (Array.isArray(c) && c.every(isChatMessage)) || (isRecord(c) && Array.isArray(c.messages)));
    if (many && !hasNativeSteps(root)) return { format: "openai_chat", data: { conversations: root.map(convertChatConversation) } };
  }
  return { format: "turnscope", data: root };
}
