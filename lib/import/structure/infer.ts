/**
 * The structural reader: for a JSON or JSON Lines file no adapter knows, the mapping its shape implies.
 * It looks for lists of records that carry a role-like field (a few short values that name speakers) and
 * a content-like field (text, or a list of parts), under whatever names and at whatever depth; finds tool
 * calls (a name with arguments or input, the arguments decoded when they are JSON text), reasoning, and
 * the field that names the call a result answers; and, when each record of the file is one message,
 * the field the messages of one session share. What it infers is an ordinary import mapping
 * (formats/mapping.ts), so the import page shows it in the mapping editor, editable and saveable, with
 * the first conversation previewed. Only a sample of the file is read (the first records of each list),
 * so inferring costs little whatever the file's size.
 */
import type { ImportMapping } from "@/lib/schemas/imports";
import { isRecord } from "../issues";
import type { ParseResult } from "../parse";
import { roleAlias } from "../suggestions";
import { parseMaybeJson, readContent } from "../formats/turns";

type Parsed = Extract<ParseResult, { ok: true }>;
type Rec = Record<string, unknown>;

/** Records sampled per list, and how deep the search goes. */
const SAMPLE = 40;
const MAX_DEPTH = 6;

const roleValues: Record<string, string> = {
  user: "user",
  assistant: "assistant",
  system: "system",
  tool: "tool",
  prompter: "user",
  observation: "tool",
  environment: "tool",
  ipython: "tool",
  "tool-call": "assistant",
  "tool-response": "tool",
  tool_call: "assistant",
  tool_response: "tool",
  function_call: "assistant",
  tool_result: "tool",
};

/** The Turnscope role a role-like value stands for; undefined for a value that names no speaker. */
function roleOf(value: string): string | undefined {
  const key = value.trim().toLowerCase();
  if (Object.prototype.hasOwnProperty.call(roleValues, key)) return roleValues[key];
  return roleAlias(key);
}

const roleKeyNames = ["role", "from", "speaker", "author", "sender", "participant", "who", "role_name", "type", "source"];
const contentKeyNames = ["content", "text", "value", "message", "utterance", "body", "response", "output", "prompt"];
const thinkingKeyNames = ["reasoning_content", "reasoning", "thinking", "thought", "thoughts", "chain_of_thought"];
const callIdKeyNames = ["tool_call_id", "tool_use_id", "call_id", "toolCallId", "tool_id"];
const groupKeyHints = /session|conversation|thread|dialog|chat|episode|trajectory|run|trace/i;
const nameKeyNames = ["name", "title", "instance_id", "task_id", "session_id", "conversation_id", "id"];

/** Keys of the sampled records, one level of nesting included (`message.role`). */
function fieldValues(records: Rec[]): Map<string, unknown[]> {
  const fields = new Map<string, unknown[]>();
  const add = (k: string, v: unknown) => {
    const list = fields.get(k);
    if (list) list.push(v);
    else fields.set(k, [v]);
  };
  for (const r of records) {
    for (const [k, v] of Object.entries(r)) {
      add(k, v);
      if (isRecord(v) && !Array.isArray(v)) for (const [k2, v2] of Object.entries(v)) add(`${k}.${k2}`, v2);
    }
  }
  return fields;
}

/** The role-like field: string values, few distinct, every one a speaker, at least one a user or an assistant. */
function roleField(fields: Map<string, unknown[]>, count: number): { key: string; values: string[] } | undefined {
  const found: Array<{ key: string; values: string[]; rank: number }> = [];
  for (const [key, values] of fields) {
    if (!values.every((v) => typeof v === "string")) continue;
    const distinct = [...new Set(values as string[])];
    if (distinct.length > 8 || !distinct.every((v) => roleOf(v))) continue;
    const mapped = distinct.map((v) => roleOf(v));
    if (!mapped.includes("user") && !mapped.includes("assistant")) continue;
    // Present on enough records (logs interleave other record kinds: progress, snapshots), or — a log whose
    // messages are a few records among many events (token counts, contexts, calls written as records of their
    // own) — on at least two; a field that common wins over one that rare.
    const rare = values.length < Math.max(1, count * 0.2);
    if (rare && values.length < 2) continue;
    const leaf = key.split(".").pop() as string;
    const named = roleKeyNames.indexOf(leaf);
    found.push({ key, values: distinct, rank: (named === -1 ? 50 : named) + (key.includes(".") ? 5 : 0) + (rare ? 100 : 0) });
  }
  found.sort((a, b) => a.rank - b.rank);
  return found[0];
}

const isTextLike = (v: unknown) => typeof v === "string" || (Array.isArray(v) && v.every((p) => typeof p === "string" || isRecord(p))) || v === null;

/** The content-like field beside the role: text or a list of parts, preferring the usual names, then the longest. */
function contentField(fields: Map<string, unknown[]>, roleKey: string): string | undefined {
  const prefix = roleKey.includes(".") ? `${roleKey.split(".")[0]}.` : "";
  const candidates: Array<{ key: string; rank: number; length: number }> = [];
  for (const [key, values] of fields) {
    if (key === roleKey || (prefix && !key.startsWith(prefix)) || (!prefix && key.includes("."))) continue;
    if (!values.every(isTextLike) || !values.some((v) => v !== null)) continue;
    const leaf = key.split(".").pop() as string;
    const named = contentKeyNames.indexOf(leaf);
    const length = values.reduce<number>((n, v) => n + (typeof v === "string" ? v.length : JSON.stringify(v).length), 0);
    candidates.push({ key, rank: named === -1 ? 50 : named, length });
  }
  candidates.sort((a, b) => a.rank - b.rank || b.length - a.length);
  return candidates[0]?.key;
}

/** A tool call: a name with arguments or input (also as JSON text, or under `function`). */
function isCall(v: unknown): boolean {
  const value = parseMaybeJson(v);
  if (!isRecord(value)) return false;
  const fn = isRecord(value.function) ? value.function : value;
  const named = typeof fn.name === "string" || typeof value.function === "string" || typeof value.tool_name === "string";
  return named && ("arguments" in fn || "input" in fn || "args" in fn || "arguments" in value || "tool_input" in value);
}

/** True when a value holds tool calls somewhere inside it (a model response an event carries), a few levels down. */
function holdsCalls(value: unknown, depth = 0): boolean {
  if (depth > 6) return false;
  if (Array.isArray(value)) return value.some((v) => (isCall(v) && !Array.isArray(v)) || holdsCalls(v, depth + 1));
  if (isRecord(value)) return Object.values(value).some((v) => (Array.isArray(v) && v.length > 0 && v.every(isCall)) || holdsCalls(v, depth + 1));
  return false;
}

function callsField(fields: Map<string, unknown[]>, skip: Set<string>): string | undefined {
  const direct = directCallsField(fields, skip);
  if (direct) return direct;
  // Calls held deeper in a field (OpenHands' `tool_call_metadata.model_response.choices[].message.tool_calls`).
  for (const [key, values] of fields) if (!skip.has(key) && !key.includes(".") && values.some((v) => holdsCalls(v))) return key;
  return undefined;
}

function directCallsField(fields: Map<string, unknown[]>, skip: Set<string>): string | undefined {
  for (const [key, values] of fields) {
    if (skip.has(key) || key.includes(".")) continue;
    const present = values.filter((v) => v !== null && v !== undefined);
    if (!present.length) continue;
    const calls = present.every((v) => {
      const parsed = parseMaybeJson(v);
      return Array.isArray(parsed) ? parsed.every(isCall) : isCall(parsed);
    });
    if (calls) return key;
  }
  return undefined;
}

type Candidate = { conversations: string; messages: string; records: Rec[]; perRecord: boolean; score: number };

/**
 * Every list of records that looks like messages, with where it sits: the path of the conversation records
 * (before the last list on the way) and the path of the messages within each.
 */
function findMessageLists(root: unknown): Candidate[] {
  const found = new Map<string, Candidate>();
  const visit = (value: unknown, segments: string[], depth: number) => {
    if (depth > MAX_DEPTH) return;
    if (Array.isArray(value)) {
      const sample = value.slice(0, SAMPLE).filter(isRecord);
      if (sample.length) {
        const fields = fieldValues(sample);
        const role = roleField(fields, sample.length);
        if (role && contentField(fields, role.key)) {
          const key = [...segments, "[]"].join("/");
          const prior = found.get(key);
          if (prior) {
            prior.records.push(...sample.slice(0, SAMPLE - Math.min(prior.records.length, SAMPLE)));
            prior.score += value.length;
          } else {
            const at = segments.lastIndexOf("[]");
            const conversations = at === -1 ? undefined : segments.slice(0, at);
            const messages = at === -1 ? segments : segments.slice(at + 1);
            if (!conversations?.includes("[]") && messages.length) {
              found.set(key, { conversations: (conversations ?? []).join("."), messages: messages.join("."), records: [...sample], perRecord: at !== -1, score: value.length });
            } else if (!messages.length) {
              found.set(key, { conversations: segments.join("."), messages: ".", records: [...sample], perRecord: false, score: value.length });
            }
          }
          return;
        }
      }
      for (const item of value.slice(0, SAMPLE)) visit(item, [...segments, "[]"], depth + 1);
      return;
    }
    if (isRecord(value)) for (const [k, v] of Object.entries(value)) if (v !== null && typeof v === "object") visit(v, [...segments, k], depth + 1);
  };
  visit(root, [], 0);
  return [...found.values()];
}

/** The field the messages of one session share, when each record of the file is one message. */
function groupField(records: Rec[]): string | undefined {
  const fields = fieldValues(records);
  let best: { key: string; distinct: number } | undefined;
  for (const [key, values] of fields) {
    if (values.length !== records.length || !values.every((v) => typeof v === "string" || typeof v === "number")) continue;
    const distinct = new Set(values).size;
    if (distinct === values.length && values.length > 1) continue;
    if (!groupKeyHints.test(key)) continue;
    if (!best || distinct < best.distinct) best = { key, distinct };
  }
  return best?.key;
}

/** The mapping the file's shape implies, or undefined when no list of records looks like messages. */
export function inferMapping(parsed: Parsed): ImportMapping | undefined {
  if (parsed.kind === "csv") return undefined;
  const root = parsed.kind === "jsonl" ? parsed.lines.slice(0, SAMPLE * 4).map((l) => l.value) : parsed.value;
  const candidates = findMessageLists(root);
  if (!candidates.length) return undefined;
  candidates.sort((a, b) => b.score - a.score);
  const best = candidates[0];
  const fields = fieldValues(best.records);
  const role = roleField(fields, best.records.length);
  if (!role) return undefined;
  const content = contentField(fields, role.key) as string;
  const mapping: ImportMapping = { messages: best.messages, role: role.key, content };
  // Each record of the file is one message (JSON Lines of messages, or a bare list): grouped by a session field.
  if (best.messages === ".") {
    const recordPrefix = role.key.includes(".") ? role.key.split(".")[0] : undefined;
    const group = groupField(best.records);
    // No session field: the records are one conversation (`""`).
    mapping.group_by = group ?? "";
    if (recordPrefix) {
      mapping.messages = recordPrefix;
      mapping.role = role.key.slice(recordPrefix.length + 1);
      mapping.content = content.slice(recordPrefix.length + 1);
    }
  }
  if (best.conversations) mapping.conversations = best.conversations;
  const roles: Record<string, string> = {};
  for (const v of role.values) {
    const to = roleOf(v) as string;
    if (to !== v) Object.defineProperty(roles, v, { value: to, enumerable: true, writable: true, configurable: true });
  }
  if (Object.keys(roles).length) mapping.roles = roles;

  const messageRecords = mapping.messages !== "." && best.messages === "." ? best.records.map((r) => r[mapping.messages]).filter(isRecord) : best.records;
  const messageFields = fieldValues(messageRecords);
  const used = new Set([mapping.role, mapping.content]);
  const calls = callsField(messageFields, used);
  if (calls) {
    mapping.tool_calls = calls;
    // A field holding its calls deeper says more than them (the whole model response): it stays in the message's meta too.
    if (directCallsField(messageFields, used) === calls) used.add(calls);
  }
  const stepKeys = new Set(["thinking", "tool_call", "tool_result", "output_content"]);
  const stepsKey = [...messageFields.keys()].find(
    (k) => !used.has(k) && !k.includes(".") && (messageFields.get(k) ?? []).some((v) => Array.isArray(v) && v.length > 0 && v.every((st) => isRecord(st) && Object.keys(st).some((x) => stepKeys.has(x)))),
  );
  if (stepsKey) {
    mapping.steps = stepsKey;
    used.add(stepsKey);
  }
  const thinking = thinkingKeyNames.find((k) => !used.has(k) && messageFields.get(k)?.some((v) => typeof v === "string" && v));
  if (thinking) {
    mapping.thinking = thinking;
    used.add(thinking);
  }
  const callId = callIdKeyNames.find((k) => messageFields.has(k));
  // Content parts holding calls or results, under whatever part type (read as the import reads them).
  const partsHoldCalls = (messageFields.get(mapping.content) ?? []).some((v) => Array.isArray(v) && (readContent(v) ?? []).some((p) => p.kind === "step" && ("tool_call" in p.step || "tool_result" in p.step)));
  const rolesHoldTools = role.values.some((v) => roleOf(v) === "tool");
  // A log writing calls as records of their own (a name with arguments, no role) beside its messages.
  const looseCalls = mapping.group_by !== undefined && best.records.some((r) => {
    const inner = mapping.messages === "." ? r : r[mapping.messages];
    return isRecord(inner) && typeof inner.name === "string" && ("arguments" in inner || "input" in inner);
  });
  if (calls || partsHoldCalls || rolesHoldTools || looseCalls || stepsKey) mapping.tool_call_id = callId ?? "tool_call_id";
  if (callId) used.add(callId);
  // Every other message field is kept in the message's meta, so no text is left behind.
  const rest = [...messageFields.keys()].filter((k) => !k.includes(".") && !used.has(k) && !used.has(k.split(".")[0]));
  if (rest.length) mapping.message_meta = rest.slice(0, 200);
  if (best.perRecord) {
    const recordFields = new Set<string>();
    const conversationsAt = mapping.conversations ? mapping.conversations.split(".") : [];
    const list = parsed.kind === "jsonl" ? (root as unknown[]) : conversationsAt.reduce<unknown>((v, k) => (isRecord(v) ? v[k] : undefined), root);
    for (const r of Array.isArray(list) ? list.slice(0, SAMPLE) : []) if (isRecord(r)) for (const k of Object.keys(r)) recordFields.add(k);
    const textual = (k: string) => Array.isArray(list) && list.slice(0, SAMPLE).every((r) => isRecord(r) && typeof r[k] === "string");
    // A usual name field, else a text field whose name says it identifies the record (`run_key`, `ticket_id`).
    const name = nameKeyNames.find((k) => recordFields.has(k) && textual(k)) ?? [...recordFields].find((k) => /(^|_)(id|key|name|title)$/i.test(k) && textual(k));
    if (name) mapping.name = name;
  }
  return mapping;
}
