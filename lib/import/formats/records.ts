/**
 * Records that hold a conversation under some key (`messages`, `traj`, `trajectory`, `conversation`,
 * `dialog`, `chat`, `history`, …): the record's other fields (`reward`, `task_id`, `trial`, `id`,
 * `label`) become the conversation's meta, so ground truth travels with the data. A top-level `system`
 * becomes the first message and `tools` the conversation's agent, whatever the message dialect.
 */
import { isRecord } from "../issues";
import { isAnthropicMessages } from "./anthropic-messages";
import { isContentParts } from "./content-parts";
import { hasOpenAiMarkers, isRequestBody } from "./openai-chat";
import { isShareGptMessages } from "./sharegpt";
import { convertMessages, systemText, toolsAsAgents, type MessageSource } from "./turns";

export type Dialect = "plain" | "openai_chat" | "sharegpt" | "anthropic_messages" | "content_parts";

/** Keys a record may keep its conversation under, most specific first. */
export const conversationKeys = [
  "messages",
  "conversations",
  "traj",
  "trajectory",
  "conversation",
  "dialog",
  "dialogue",
  "chat",
  "history",
  "turns",
  "messages_list",
  "transcript",
] as const;

const turnscopeFields = new Set(["name", "description", "meta", "agents"]);
const own = (obj: Record<string, unknown>, key: string) => Object.prototype.hasOwnProperty.call(obj, key);

/** A message of some chat format: an object with a string `role` or ShareGPT `from`. */
export function isMessageLike(value: unknown): boolean {
  return isRecord(value) && (typeof value.role === "string" || typeof value.from === "string");
}

/** The key holding the record's messages: `messages` whatever it holds, another key only when it holds messages. */
export function conversationKeyOf(record: Record<string, unknown>): string | undefined {
  if (own(record, "messages")) return "messages";
  return conversationKeys.find((k) => {
    const v = record[k];
    return own(record, k) && Array.isArray(v) && v.length > 0 && v.every(isMessageLike);
  });
}

function hasNativeSteps(messages: unknown[]): boolean {
  return messages.some((m) => isRecord(m) && "steps" in m);
}

/** The message dialect of one conversation's messages (and its record, for request bodies and Anthropic's `system`). */
export function dialectOf(messages: unknown[], record?: Record<string, unknown>): Dialect {
  if (hasNativeSteps(messages)) return "plain";
  if (isShareGptMessages(messages)) return "sharegpt";
  // Anthropic's blocks are specific (tool_use with input, tool_result with tool_use_id, thinking with
  // `thinking`); test them first, as their tool_result text under `content` also looks like foreign parts.
  if (isAnthropicMessages(messages, record)) return "anthropic_messages";
  if (isContentParts(messages)) return "content_parts";
  if (hasOpenAiMarkers(messages) || (record !== undefined && isRequestBody(record))) return "openai_chat";
  return "plain";
}

export type ConvertedRecord = {
  conversation: unknown;
  /** Converted message j → where it starts in the file's message list; absent when messages are as given. */
  messageSources?: MessageSource[];
  /** The file's message list, for locating issues and lost text. */
  rawMessages?: unknown[];
  /** Fields moved into meta (so the file is a record set rather than plain Turnscope). */
  movedToMeta: boolean;
};

/** A Turnscope conversation as it is: a `messages` list and no field Turnscope does not have. */
function isPlainConversation(value: Record<string, unknown>): boolean {
  if (!Array.isArray(value.messages)) return false;
  for (const key in value) if (key !== "messages" && !turnscopeFields.has(key)) return false;
  return true;
}

/** One record (or a bare message list) → a Turnscope conversation, in the given dialect. */
export function convertRecord(value: unknown, dialect: Dialect): ConvertedRecord {
  // The common case costs no copy and no bookkeeping: a Turnscope file's own conversations.
  if (dialect === "plain" && isRecord(value) && isPlainConversation(value)) {
    return { conversation: value, rawMessages: value.messages as unknown[], movedToMeta: false };
  }
  if (Array.isArray(value)) {
    if (dialect === "plain") return { conversation: { messages: value }, rawMessages: value, movedToMeta: false };
    const converted = convertMessages(value);
    return { conversation: { messages: converted.messages }, messageSources: converted.sources, rawMessages: value, movedToMeta: false };
  }
  if (!isRecord(value)) return { conversation: value, movedToMeta: false };
  const key = conversationKeyOf(value);
  if (!key) return { conversation: value, movedToMeta: false };
  const rawMessages = value[key];
  if (!Array.isArray(rawMessages)) return { conversation: value, movedToMeta: false };

  const used = new Set<string>([key]);
  const conversation: Record<string, unknown> = {};
  for (const f of turnscopeFields) if (own(value, f)) conversation[f] = value[f];
  for (const f of turnscopeFields) used.add(f);

  let messages: unknown[] = rawMessages;
  let messageSources: MessageSource[] | undefined;
  if (dialect !== "plain") {
    const converted = convertMessages(rawMessages);
    messages = converted.messages;
    messageSources = converted.sources;
  }
  const system = systemText(value.system);
  if (system !== undefined) {
    used.add("system");
    const first = messages[0];
    if (!(isRecord(first) && first.role === "system" && first.content === system)) {
      messages = [{ role: "system", content: system }, ...messages];
      messageSources = ["system", ...(messageSources ?? rawMessages.map((_, i) => i))];
    }
  }
  conversation.messages = messages;
  if (!own(value, "agents")) {
    // `functions` is the legacy chat-completions name of `tools`.
    const toolsKey = own(value, "tools") ? "tools" : "functions";
    const agents = toolsAsAgents(value[toolsKey]);
    if (agents) {
      conversation.agents = agents;
      used.add(toolsKey);
    }
  }
  if (!own(value, "meta") && isRecord(value.metadata)) {
    conversation.meta = value.metadata;
    used.add("metadata");
  }
  const extras = Object.keys(value).filter((k) => !used.has(k));
  const meta = conversation.meta;
  if (extras.length && (meta === undefined || meta === null || isRecord(meta))) {
    const merged: Record<string, unknown> = {};
    for (const k of extras) Object.defineProperty(merged, k, { value: value[k], enumerable: true, writable: true, configurable: true });
    // The record's own meta wins over a field of the same name next to it.
    if (isRecord(meta)) for (const k of Object.keys(meta)) Object.defineProperty(merged, k, { value: meta[k], enumerable: true, writable: true, configurable: true });
    conversation.meta = merged;
  }
  // Nothing changed: hand on the file's own object, so a plain Turnscope file costs no copy.
  const unchanged = key === "messages" && dialect === "plain" && system === undefined && !extras.length && !("tools" in conversation) && conversation.meta === value.meta && conversation.agents === value.agents;
  return {
    conversation: unchanged ? value : conversation,
    messageSources,
    rawMessages,
    movedToMeta: extras.length > 0 || key !== "messages",
  };
}
