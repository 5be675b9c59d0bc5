/**
 * Nothing silently lost: the text read from the file's messages is counted against the text the
 * converted conversations hold. Text no field of the import holds is listed per field path
 * (`messages[].content[].value`, N characters), and a message that would be stored empty although
 * its file message had text is an error with the path of that text — an import that drops every
 * message's text must be refused, not called complete.
 *
 * Only text is counted: string values, and the string values inside JSON text (tool arguments arrive
 * as JSON strings and are stored parsed). Structural values (roles, part types, ids) are not text.
 */
import type { ImportIssue, NotImported } from "@/lib/schemas/imports";
import { isRecord } from "./issues";
import type { ConversationSource } from "./formats/source-paths";

/** Values that say what a thing is or which one, not what was said: never counted as text. */
const structuralKeys = new Set([
  "role",
  "from",
  "type",
  "id",
  "tool_call_id",
  "call_id",
  "tool_use_id",
  "index",
  "finish_reason",
  "model",
  "object",
  "status",
  "media_type",
  "mime_type",
  "detail",
  "format",
  "signature",
  "cache_control",
]);

/** Fields a Turnscope message or conversation holds as they are; anything else on an unconverted one is dropped. */
const messageFields = new Set(["role", "content", "meta", "steps"]);

type Leaf = { path: string; text: string };

function jsonText(text: string): unknown {
  const t = text.trimStart();
  if (!t.startsWith("{") && !t.startsWith("[")) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Every text leaf under a value, with its generalised path (array indexes as `[]`). */
function collectLeaves(value: unknown, path: string, out: Leaf[], skip: Set<string>, depth = 0): void {
  if (depth > 64) return;
  if (typeof value === "string") {
    if (value.trim() === "") return;
    const parsed = jsonText(value);
    if (parsed !== undefined) collectLeaves(parsed, path, out, skip, depth + 1);
    else out.push({ path, text: value });
    return;
  }
  if (Array.isArray(value)) {
    for (const v of value) collectLeaves(v, `${path}[]`, out, skip, depth + 1);
    return;
  }
  if (!isRecord(value)) return;
  for (const key of Object.keys(value)) {
    if (skip.has(key)) continue;
    collectLeaves(value[key], path ? `${path}.${key}` : key, out, skip, depth + 1);
  }
}

/** All text a stored value holds, as one string to search (leaves separated by a character text never has). */
function storedText(value: unknown): string {
  const leaves: Leaf[] = [];
  collectLeavesAll(value, leaves);
  return leaves.map((l) => l.text).join("\u0000");
}

/** Like collectLeaves but keeping structural values too (a stored tool name is stored text). */
function collectLeavesAll(value: unknown, out: Leaf[], depth = 0): void {
  if (depth > 64) return;
  if (typeof value === "string") {
    const parsed = jsonText(value);
    if (parsed !== undefined) collectLeavesAll(parsed, out, depth + 1);
    out.push({ path: "", text: value });
  } else if (Array.isArray(value)) for (const v of value) collectLeavesAll(v, out, depth + 1);
  else if (isRecord(value)) for (const key of Object.keys(value)) collectLeavesAll(value[key], out, depth + 1);
}

/** `conversations[12].messages` → `conversations[].messages`. */
const generalise = (path: string) => path.replace(/\[\d+\]/g, "[]");

function messageIsEmpty(message: unknown): boolean {
  if (!isRecord(message)) return false;
  const content = message.content;
  const noText = content === undefined || content === null || (typeof content === "string" && content.trim() === "");
  const noSteps = !Array.isArray(message.steps) || message.steps.length === 0;
  return noText && noSteps;
}

export type TextAccount = { notImported: NotImported[]; errors: ImportIssue[] };

/** Every text a converted conversation stores, for exact look-up, and all of it joined for the rest. */
function conversationText(conversation: unknown): { leaves: Set<string>; joined: string } {
  const leaves: Leaf[] = [];
  collectLeavesAll(conversation, leaves);
  const texts = leaves.map((l) => l.text);
  return { leaves: new Set(texts), joined: texts.join("\u0000") };
}

/** Whole-file adapters: each unit's text anywhere in its conversation (exact leaves first, then as a part of a longer text). */
function accountWhole(conversation: unknown, source: ConversationSource, skip: Set<string>, lost: Map<string, number>): void {
  const stored = conversationText(conversation);
  const base = generalise(source.messagesPath);
  for (const raw of source.rawMessages ?? []) {
    const leaves: Leaf[] = [];
    collectLeaves(raw, "", leaves, skip);
    for (const leaf of leaves) {
      if (stored.leaves.has(leaf.text) || stored.joined.includes(leaf.text)) continue;
      const path = `${base}[].${leaf.path}`.replace(/^\[\]\./, "[].");
      lost.set(path, (lost.get(path) ?? 0) + leaf.text.length);
    }
  }
}

/**
 * Compare the file's message text with the converted conversations. `sources[i]` describes converted
 * conversation i; a conversation without `rawMessages` (CSV, where every cell is placed) is not counted.
 */
export function accountText(conversations: unknown[], sources: ConversationSource[] | undefined, roleField?: string, structural?: readonly string[]): TextAccount {
  // A mapping's role field is as structural as `role`: its values were mapped, not dropped.
  const extra = [...(roleField ? [roleField] : []), ...(structural ?? [])];
  const skip = extra.length ? new Set([...structuralKeys, ...extra]) : structuralKeys;
  const lost = new Map<string, number>();
  const errors: ImportIssue[] = [];
  if (!sources) return { notImported: [], errors };

  conversations.forEach((conversation, i) => {
    const source = sources[i];
    const rawMessages = source?.rawMessages;
    if (!source || !rawMessages || !isRecord(conversation) || !Array.isArray(conversation.messages)) return;
    if (source.wholeConversation) return accountWhole(conversation, source, skip, lost);
    const converted = conversation.messages as unknown[];
    const base = source.messagesPath;
    const unchanged = converted === rawMessages;

    // Converted message j covers file messages from its start to the next one's start.
    const ownerOf = new Map<number, number>();
    if (!unchanged && source.messageSources) {
      source.messageSources.forEach((s, j) => {
        if (typeof s !== "number") return;
        const next = source.messageSources?.slice(j + 1).find((n): n is number => typeof n === "number") ?? rawMessages.length;
        for (let k = s; k < next; k++) ownerOf.set(k, j);
      });
    }

    rawMessages.forEach((raw, k) => {
      if (!isRecord(raw)) return;
      const leaves: Leaf[] = [];
      let target: unknown;
      if (unchanged || !source.messageSources) {
        // Stored as it is: only fields a Turnscope message does not have are dropped.
        target = converted[k];
        for (const key of Object.keys(raw)) if (!messageFields.has(key) && !skip.has(key)) collectLeaves(raw[key], key, leaves, skip);
        if (!leaves.length) return;
      } else {
        collectLeaves(raw, "", leaves, skip);
        if (!leaves.length) return;
        const j = ownerOf.get(k);
        target = j === undefined ? undefined : converted[j];
        const haystack = storedText(target);
        const missing = leaves.filter((l) => !haystack.includes(l.text));
        leaves.splice(0, leaves.length, ...missing);
        if (!leaves.length) return;
      }
      for (const leaf of leaves) {
        const path = `${generalise(base)}[].${leaf.path}`.replace(/^\[\]\./, "[].");
        lost.set(path, (lost.get(path) ?? 0) + leaf.text.length);
      }
      if (messageIsEmpty(target)) {
        const first = leaves[0];
        const at = `${base}[${k}]${first.path ? `.${first.path.replace(/\[\]/g, "[0]")}` : ""}`;
        const characters = leaves.reduce((n, l) => n + l.text.length, 0);
        const issue: ImportIssue = {
          path: at,
          message: `This message would be stored empty, but the file has ${characters} characters of text in it (${leaves
            .map((l) => `'${l.path}'`)
            .filter((p, x, all) => all.indexOf(p) === x)
            .join(", ")}) that no field of the import reads`,
          suggestion: /^[\w$]+$/.test(first.path)
            ? `Rename '${first.path}' to 'content', or send a mapping whose content field is '${first.path}'`
            : `Put the text of '${first.path}' in 'content' (or a content part's 'text'), or send a mapping that names the field holding it`,
        };
        if (source.line !== undefined) issue.line = source.line;
        errors.push(issue);
      }
    });
  });
  const notImported = [...lost].map(([path, characters]) => ({ path, characters })).sort((a, b) => b.characters - a.characters);
  return { notImported, errors };
}
