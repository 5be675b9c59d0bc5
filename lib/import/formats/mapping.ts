/**
 * A mapping for a file no adapter reads: where the conversation records are, which record field holds
 * the message list, which message fields are role, content and steps, a role value map, and which
 * fields go to meta. `applyMapping` reads a parsed upload with one; `proposeMapping` is the rules'
 * guess from the first records, offered only after it has been checked to import the file.
 */
import type { ImportMapping } from "@/lib/schemas/imports";
import { isRecord } from "../issues";
import type { ParseResult } from "../parse";
import { roleAlias } from "../suggestions";
import type { Normalised } from "./normalised";
import type { ConversationSource } from "./source-paths";
import { answersKey, callsInText, isCallLike, looseToolRecord, mediaOf, nestedCalls, pairResults } from "./mapping-tools";
import { readContent, toolCallStep, parseMaybeJson } from "./turns";

type Parsed = Extract<ParseResult, { ok: true }>;
const own = (obj: Record<string, unknown>, key: string) => Object.prototype.hasOwnProperty.call(obj, key);
const turnscopeRoles = new Set(["user", "assistant", "system", "tool"]);

/** `results.items` → the value there; own keys only, so a path can never reach a prototype. */
function at(value: unknown, path: string | undefined): unknown {
  if (!path || path === ".") return value;
  let current = value;
  for (const key of path.split(".")) {
    if (!isRecord(current) || !own(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

function textOf(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return null;
  const pieces = readContent(value);
  if (pieces) return pieces.filter((p) => p.kind === "text").map((p) => (p as { text: string }).text).join("\n") || null;
  return JSON.stringify(value);
}

function pick(obj: Record<string, unknown>, keys: string[]): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (own(obj, k)) Object.defineProperty(out, k, { value: obj[k], enumerable: true, writable: true, configurable: true });
  return Object.keys(out).length ? out : null;
}

function convertMessage(m: unknown, mapping: ImportMapping): unknown {
  if (!isRecord(m)) return m;
  const rawRole = at(m, mapping.role);
  const roleText = typeof rawRole === "string" ? rawRole : rawRole === undefined ? undefined : String(rawRole);
  const mapped = roleText !== undefined && mapping.roles && own(mapping.roles, roleText) ? mapping.roles[roleText] : roleText;
  const steps: Record<string, unknown>[] = [];
  const thinking = mapping.thinking ? textOf(at(m, mapping.thinking)) : null;
  if (thinking) steps.push({ thinking });
  const rawContent = at(m, mapping.content);
  // Content parts (Anthropic blocks, typed parts) hold calls, results and reasoning as well as text: kept as steps.
  const pieces = Array.isArray(rawContent) ? readContent(rawContent) : undefined;
  const partSteps = pieces?.filter((p) => p.kind === "step").map((p) => (p as { step: Record<string, unknown> }).step) ?? [];
  steps.push(...partSteps);
  const callsValue = mapping.tool_calls ? at(m, mapping.tool_calls) : undefined;
  if (callsValue !== undefined && callsValue !== null) {
    const calls = parseMaybeJson(callsValue);
    const list = Array.isArray(calls) ? calls : [calls];
    // The field holds its calls deeper (a model response an event carries): those calls, found inside it.
    const found = list.every(isCallLike) ? list : nestedCalls(calls);
    for (const call of found) steps.push(toolCallStep(call));
  }
  // Steps already in the Turnscope shape (`thinking`, `tool_call`, `tool_result`, `output_content`): kept as they are.
  const given = mapping.steps ? at(m, mapping.steps) : undefined;
  if (Array.isArray(given)) steps.push(...given.filter(isRecord));
  const resultValue = mapping.tool_result ? at(m, mapping.tool_result) : undefined;
  if (resultValue !== undefined && resultValue !== null) steps.push({ tool_result: parseMaybeJson(resultValue) });
  // A message whose text is a call as JSON text (ShareGPT's `function_call` turns): the call, as a step.
  const textCall = mapping.tool_call_id !== undefined && typeof rawContent === "string" ? callsInText(rawContent) : undefined;
  if (textCall) {
    steps.push(...textCall);
    const message: Record<string, unknown> = { role: mapped, content: null, steps };
    if (mapping.message_meta?.length) message.meta = pick(m, mapping.message_meta);
    return message;
  }
  const content = pieces && partSteps.length ? pieces.filter((p) => p.kind === "text").map((p) => (p as { text: string }).text).join("\n") || null : textOf(rawContent);
  if (steps.length && content) steps.push({ output_content: content });
  const message: Record<string, unknown> = { content };
  if (mapped !== undefined) message.role = mapped;
  if (steps.length) message.steps = steps;
  if (mapping.message_meta?.length) message.meta = pick(m, mapping.message_meta);
  // Media parts become a placeholder in the text; where they are (their URL) stays in the message's meta.
  const media = Array.isArray(rawContent) ? mediaOf(rawContent) : [];
  if (media.length) message.meta = { ...(isRecord(message.meta) ? message.meta : {}), media };
  const answers = mapping.tool_call_id ? at(m, mapping.tool_call_id) : undefined;
  if (answers !== undefined && answers !== null) Object.defineProperty(message, answersKey, { value: String(answers), enumerable: false });
  return message;
}

/** The records the mapping reads, each with its path in the file and its JSON Lines line. */
function recordsOf(parsed: Parsed, mapping: ImportMapping): Array<{ value: unknown; path: string; line?: number }> | undefined {
  if (parsed.kind === "csv") return undefined;
  if (parsed.kind === "jsonl") {
    return parsed.lines.flatMap((l) => {
      const inner = at(l.value, mapping.conversations);
      if (Array.isArray(inner)) return inner.map((value, i) => ({ value, path: `${mapping.conversations}[${i}]`, line: l.line }));
      return [{ value: inner ?? l.value, path: mapping.conversations ?? "", line: l.line }];
    });
  }
  const found = at(parsed.value, mapping.conversations);
  const base = mapping.conversations ?? "";
  if (Array.isArray(found)) return found.map((value, i) => ({ value, path: `${base}[${i}]` }));
  if (isRecord(found)) return [{ value: found, path: base }];
  return undefined;
}

/** Read a parsed upload with a mapping; what does not fit is left for validation to name. */
export function applyMapping(parsed: Parsed, mapping: ImportMapping): Normalised {
  if (mapping.group_by !== undefined) return applyGrouped(parsed, mapping, mapping.group_by);
  const records = recordsOf(parsed, mapping);
  if (!records) {
    return {
      format: "mapping",
      data: {},
      errors: [
        {
          path: mapping.conversations || "(root)",
          message: `The mapping's conversations path '${mapping.conversations ?? ""}' does not hold a list of records here`,
          suggestion: "Set 'conversations' to the path of the list of records (empty for a top-level array or JSON Lines)",
        },
      ],
    };
  }
  const sources: ConversationSource[] = [];
  const conversations = records.map(({ value, path, line }) => {
    const join = (field: string) => (path ? `${path}.${field}` : field);
    if (!isRecord(value)) {
      sources.push({ path, messagesPath: join(mapping.messages), line });
      return value;
    }
    const rawMessages = at(value, mapping.messages);
    const conversation: Record<string, unknown> = {};
    if (mapping.name && typeof value[mapping.name] === "string") conversation.name = value[mapping.name];
    const topKey = mapping.messages.split(".")[0];
    const metaKeys = mapping.meta ?? Object.keys(value).filter((k) => k !== topKey && k !== mapping.name);
    conversation.meta = pick(value, metaKeys);
    if (Array.isArray(rawMessages)) {
      const converted = rawMessages.map((m) => convertMessage(m, mapping));
      conversation.messages = mapping.tool_call_id ? pairResults(converted) : converted;
    }
    sources.push({
      path,
      messagesPath: join(mapping.messages),
      line,
      raw: value,
      rawMessages: Array.isArray(rawMessages) ? rawMessages : undefined,
      // One file message per converted message, compared field by field for the text accounting; folded replies
      // make that untrue, so the conversation is then searched as a whole.
      messageSources: Array.isArray(rawMessages) && !mapping.tool_call_id ? rawMessages.map((_, i) => i) : undefined,
      wholeConversation: mapping.tool_call_id ? true : undefined,
    });
    return conversation;
  });
  keepFileFields(parsed, mapping, conversations);
  return { format: "mapping", data: { conversations }, sources };
}

/**
 * The fields of the file beside its conversation list (an eval's settings, a benchmark's tasks): kept once, in
 * the first conversation's meta as `file`, so what the file says around its conversations is not dropped.
 */
function keepFileFields(parsed: Parsed, mapping: ImportMapping, conversations: unknown[]): void {
  if (parsed.kind !== "json" || !mapping.conversations || !isRecord(parsed.value)) return;
  const listKey = mapping.conversations.split(".")[0];
  const rest = Object.keys(parsed.value).filter((k) => k !== listKey);
  const first = conversations[0];
  if (!rest.length || !isRecord(first)) return;
  const meta = isRecord(first.meta) ? first.meta : {};
  first.meta = { ...meta, file: pick(parsed.value, rest) };
}

/**
 * Records that are single messages, grouped into conversations by a shared field (a session id), in file
 * order. The conversation's meta holds the group's value and the fields every record of the group shares.
 */
function applyGrouped(parsed: Parsed, mapping: ImportMapping, groupBy: string): Normalised {
  const records = recordsOf(parsed, { ...mapping, group_by: undefined });
  if (!records) return applyMapping(parsed, { ...mapping, group_by: undefined });
  const groups = new Map<string, Array<{ value: unknown; path: string; line?: number }>>();
  for (const r of records) {
    const key = isRecord(r.value) && groupBy ? at(r.value, groupBy) : undefined;
    const k = key === undefined || key === null ? "" : typeof key === "string" ? key : JSON.stringify(key);
    const list = groups.get(k);
    if (list) list.push(r);
    else groups.set(k, [r]);
  }
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  for (const [key, members] of groups) {
    const converted: unknown[] = [];
    // Records that are no message (progress, snapshots): kept in the conversation's meta, not dropped.
    const others: unknown[] = [];
    for (const r of members) {
      const m = isRecord(r.value) ? at(r.value, mapping.messages) : r.value;
      const loose = isRecord(m) && at(m, mapping.role) === undefined ? looseToolRecord(m) : undefined;
      if (!isRecord(m) || (at(m, mapping.role) === undefined && !loose)) {
        others.push(r.value);
        continue;
      }
      const message = loose ?? (convertMessage(m, mapping) as Record<string, unknown>);
      // The record's own fields around its message (ids, the tool's copy of a result) go to the message's meta.
      if (mapping.messages !== "." && isRecord(r.value)) {
        const around = Object.keys(r.value).filter((k) => k !== mapping.messages && k !== groupBy);
        if (around.length) message.meta = { ...(pick(r.value, around) ?? {}), ...(isRecord(message.meta) ? message.meta : {}) };
      }
      converted.push(message);
    }
    const meta: Record<string, unknown> = groupBy ? { [groupBy]: key } : {};
    if (others.length) meta.other_records = others;
    conversations.push({ name: key || undefined, meta: Object.keys(meta).length ? meta : null, messages: mapping.tool_call_id ? pairResults(converted) : converted });
    sources.push({ path: members[0].path, messagesPath: members[0].path, line: members[0].line, rawMessages: members.map((r) => r.value), wholeConversation: true });
  }
  return { format: "mapping", data: { conversations }, sources };
}

const roleNames = new Set(["role", "speaker", "from", "author", "sender", "participant", "who", "type", "role_name", "user_type"]);

/** The record list of a parsed upload: the top-level array, JSON Lines, or the first array of objects under a top-level key. */
function candidateRecords(parsed: Parsed): { path: string; records: unknown[] } | undefined {
  if (parsed.kind === "csv") return undefined;
  if (parsed.kind === "jsonl") return { path: "", records: parsed.lines.map((l) => l.value) };
  const root = parsed.value;
  if (Array.isArray(root)) return { path: "", records: root };
  if (!isRecord(root)) return undefined;
  for (const key of Object.keys(root)) {
    const v = root[key];
    if (Array.isArray(v) && v.length && v.every(isRecord)) return { path: key, records: v };
  }
  return { path: "", records: [root] };
}

/**
 * The rules' guess: the record's first field holding a list of objects is the message list; the
 * message field whose values are few short words is the role (mapped through the known aliases),
 * the longest text field the content. Undefined when the shape gives no such fields.
 */
export function proposeMapping(parsed: Parsed): ImportMapping | undefined {
  const found = candidateRecords(parsed);
  const first = found?.records.find(isRecord);
  if (!found || !first) return undefined;
  const messagesKey = Object.keys(first).find((k) => Array.isArray(first[k]) && (first[k] as unknown[]).length > 0 && (first[k] as unknown[]).every(isRecord));
  if (!messagesKey) return undefined;
  const messages = found.records.flatMap((r) => (isRecord(r) && Array.isArray(r[messagesKey]) ? (r[messagesKey] as unknown[]) : [])).filter(isRecord).slice(0, 500);
  const stringFields = new Map<string, string[]>();
  for (const m of messages) for (const [k, v] of Object.entries(m)) if (typeof v === "string") stringFields.set(k, [...(stringFields.get(k) ?? []), v]);
  const fields = [...stringFields.entries()];
  const role =
    fields.find(([k]) => roleNames.has(k.toLowerCase())) ??
    fields.find(([, values]) => new Set(values).size <= 6 && values.every((v) => v.length <= 20 && (turnscopeRoles.has(v) || roleAlias(v) !== undefined)));
  if (!role) return undefined;
  const average = (values: string[]) => values.reduce((n, v) => n + v.length, 0) / values.length;
  const content = fields.filter(([k]) => k !== role[0]).sort((a, b) => average(b[1]) - average(a[1]))[0];
  if (!content) return undefined;
  const roles: Record<string, string> = {};
  for (const value of new Set(role[1])) {
    if (turnscopeRoles.has(value)) continue;
    const alias = roleAlias(value);
    if (!alias) return undefined;
    Object.defineProperty(roles, value, { value: alias, enumerable: true, writable: true, configurable: true });
  }
  const mapping: ImportMapping = { messages: messagesKey, role: role[0], content: content[0] };
  if (found.path) mapping.conversations = found.path;
  if (Object.keys(roles).length) mapping.roles = roles;
  return mapping;
}
