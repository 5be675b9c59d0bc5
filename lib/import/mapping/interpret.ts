/**
 * The interpreter of the mapping language, version 2 (lib/schemas/import-mapping.ts): a parsed upload and a
 * mapping → conversations in the Turnscope shape. Pure and safe: it follows paths, compares values and splits
 * text on literal markers; nothing from the file or the mapping runs. Stages, in order:
 *
 * 1. records — found at their path(s), array lines named (`line_fields`), JSON text decoded, records that are no
 *    messages skipped (counted by kind), records written several times collapsed by id;
 * 2. conversations — per record, grouped, a parent/child tree, a run/span tree, a plain-text transcript, or a
 *    preference / pairwise pair;
 * 3. messages — each read by its fields (role, content, kinds, thinking, calls and their results) or as a chat
 *    message of a known dialect, then folded by the chat reader (formats/turns.ts): an assistant turn is the
 *    assistant's messages and the tool results between them.
 */
import type { ImportMappingV2, MappingExtract, MappingKindRule, MappingMessage, MappingSide } from "@/lib/schemas/import-mapping";
import type { ParseResult } from "../parse";
import type { Normalised } from "../formats/normalised";
import type { ConversationSource } from "../formats/source-paths";
import { convertMessages } from "../formats/turns";
import { allHold, anyHolds, decodeAt, decodeText, get, isRec, keyOf } from "./paths";

type Parsed = Extract<ParseResult, { ok: true }>;
type Rec = Record<string, unknown>;
type Item = { value: unknown; path: string; line?: number };
/** A file message on its way to the chat reader, with meta to add once it is read. */
type Built = { name?: string; meta: Rec | null; messages: unknown[]; source: ConversationSource; format: "fields" | "chat"; order?: boolean };

const turnscopeRoles = new Set(["user", "assistant", "system", "tool"]);

// ——— 1. records ———

function recordsAt(parsed: Parsed, mapping: ImportMappingV2): Item[] {
  const spec = mapping.records ?? {};
  const paths = spec.path === undefined ? [""] : Array.isArray(spec.path) ? spec.path : [spec.path];
  const out: Item[] = [];
  const expand = (value: unknown, base: string, line: number | undefined, p: string) => {
    const found = get(value, p);
    const at = [base, p].filter(Boolean).join(".");
    if (Array.isArray(found)) found.forEach((v, i) => out.push({ value: v, path: `${at}[${i}]`, line }));
    else if (p && isRec(found) && Object.values(found).length && Object.values(found).every(isRec)) {
      // An object keyed by id: its values, each with its key.
      for (const [k, v] of Object.entries(found)) out.push({ value: { _key: k, ...(v as Rec) }, path: `${at}.${k}`, line });
    } else if (found !== undefined) out.push({ value: found, path: at, line });
  };
  if (parsed.kind === "jsonl") {
    for (const p of paths) {
      for (const l of parsed.lines) {
        if (p) expand(l.value, "", l.line, p);
        else out.push({ value: l.value, path: "", line: l.line });
      }
    }
  } else if (parsed.kind === "json") {
    for (const p of paths) expand(parsed.value, "", undefined, p);
  }
  return out;
}

type RecordsOut = { items: Item[]; skipped: Record<string, number>; read: number };

function prepareRecords(parsed: Parsed, mapping: ImportMappingV2): RecordsOut {
  const spec = mapping.records ?? {};
  const skipped: Record<string, number> = {};
  let items = recordsAt(parsed, mapping);
  const read = items.length;
  if (spec.line_fields) {
    const names = spec.line_fields;
    items = items.map((it) => {
      if (!Array.isArray(it.value)) return it;
      const rec: Rec = {};
      names.forEach((n, i) => (rec[n] = it.value instanceof Array ? (it.value as unknown[])[i] : undefined));
      if ((it.value as unknown[]).length > names.length) rec.rest = (it.value as unknown[]).slice(names.length);
      return { ...it, value: rec };
    });
  }
  if (spec.decode_json?.length) {
    items = items.map((it) => ({ ...it, value: spec.decode_json!.reduce((v, p) => decodeAt(v, p), it.value) }));
  }
  const kindOf = (v: unknown) => keyOf(get(v, spec.kind)) ?? "record";
  items = items.filter((it) => {
    const keep = allHold(it.value, spec.where) && !anyHolds(it.value, spec.skip);
    if (!keep) skipped[kindOf(it.value)] = (skipped[kindOf(it.value)] ?? 0) + 1;
    return keep;
  });
  if (spec.collapse) {
    const { by, keep = "last" } = spec.collapse;
    const at = new Map<string, number>();
    const out: Item[] = [];
    let collapsed = 0;
    for (const it of items) {
      const id = keyOf(get(it.value, by));
      if (id === undefined) {
        out.push(it);
        continue;
      }
      const i = at.get(id);
      if (i === undefined) {
        at.set(id, out.length);
        out.push(it);
        continue;
      }
      collapsed++;
      const prior = out[i];
      out[i] = keep === "merge" && isRec(prior.value) && isRec(it.value) ? { ...prior, value: mergeDefined(prior.value, it.value) } : { ...it, path: prior.path, line: prior.line };
    }
    if (collapsed) skipped["earlier version of a record"] = collapsed;
    items = out;
  }
  return { items, skipped, read };
}

/** Later fields laid over earlier ones, except where the later one is absent or null. */
function mergeDefined(a: Rec, b: Rec): Rec {
  const out: Rec = { ...a };
  for (const [k, v] of Object.entries(b)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}

// ——— 3. messages ———

/** LangChain's serialised message (`{lc, type: "constructor", id: [..., "HumanMessage"], kwargs}`) or its dict form, as a chat message. */
const lcRoles: Record<string, string> = {
  HumanMessage: "user",
  HumanMessageChunk: "user",
  AIMessage: "assistant",
  AIMessageChunk: "assistant",
  SystemMessage: "system",
  ToolMessage: "tool",
  FunctionMessage: "tool",
  ChatMessage: "user",
  human: "user",
  ai: "assistant",
  system: "system",
  tool: "tool",
  function: "tool",
};

export function chatMessage(m: unknown): unknown {
  if (!isRec(m)) return typeof m === "string" ? { role: "user", content: m } : m;
  if (m.lc !== undefined && Array.isArray(m.id) && isRec(m.kwargs)) {
    const cls = String(m.id[m.id.length - 1]);
    const kw = m.kwargs;
    const out: Rec = { role: Object.prototype.hasOwnProperty.call(lcRoles, cls) ? lcRoles[cls] : (kw.role ?? "user"), content: kw.content ?? null };
    if (Array.isArray(kw.tool_calls) && kw.tool_calls.length) out.tool_calls = kw.tool_calls;
    else if (isRec(kw.additional_kwargs) && Array.isArray(kw.additional_kwargs.tool_calls) && kw.additional_kwargs.tool_calls.length) out.tool_calls = kw.additional_kwargs.tool_calls;
    if (typeof kw.tool_call_id === "string") out.tool_call_id = kw.tool_call_id;
    const meta: Rec = {};
    for (const k of ["id", "name", "response_metadata", "usage_metadata"]) if (kw[k] !== undefined && !(isRec(kw[k]) && !Object.keys(kw[k] as Rec).length)) meta[k] = kw[k];
    if (Object.keys(meta).length) out.meta = meta;
    return out;
  }
  if (typeof m.role !== "string" && typeof m.type === "string" && Object.prototype.hasOwnProperty.call(lcRoles, m.type) && (isRec(m.data) || "content" in m)) {
    return chatMessage({ lc: 1, id: [m.type === "human" ? "HumanMessage" : m.type === "ai" ? "AIMessage" : m.type === "system" ? "SystemMessage" : "ToolMessage"], kwargs: isRec(m.data) ? m.data : m });
  }
  return m;
}

/** The chat messages a model call's input or output holds: a list, `messages`, LangChain's list of lists, `generations`, `choices`, text. */
export function chatMessagesIn(value: unknown, side: "input" | "output"): unknown[] {
  const v = decodeText(value);
  if (v === undefined || v === null) return [];
  if (typeof v === "string") return v ? [{ role: side === "input" ? "user" : "assistant", content: v }] : [];
  if (Array.isArray(v)) {
    if (v.length && v.every(Array.isArray)) return chatMessagesIn(v[v.length - 1], side);
    return v.map(chatMessage);
  }
  if (!isRec(v)) return [];
  for (const key of ["messages", "input", "prompt"]) if (v[key] !== undefined && side === "input" && (Array.isArray(v[key]) || typeof v[key] === "string")) return chatMessagesIn(v[key], side);
  if (Array.isArray(v.generations)) {
    const last = v.generations.flat(2).filter(isRec).pop();
    if (!last) return [];
    return last.message !== undefined ? [chatMessage(last.message)] : [{ role: "assistant", content: last.text ?? null }];
  }
  if (Array.isArray(v.choices)) {
    const c = v.choices.filter(isRec).pop();
    return c?.message !== undefined ? [chatMessage(c.message)] : c ? [{ role: "assistant", content: c.text ?? null }] : [];
  }
  if (v.lc !== undefined || typeof v.role === "string" || (typeof v.type === "string" && Object.prototype.hasOwnProperty.call(lcRoles, v.type))) return [chatMessage(v)];
  for (const key of ["messages", "output", "message", "content", "text"]) if (v[key] !== undefined) return chatMessagesIn(v[key], side);
  return [];
}

/** Text of a value: a string, a list of strings or parts (joined), or an object's text fields. */
function textOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) {
    const parts = value.map((p) => textOf(p)).filter((t): t is string => t !== null && t !== "");
    return parts.length ? parts.join("\n") : null;
  }
  if (isRec(value)) {
    for (const k of ["text", "content", "value", "description"]) if (typeof value[k] === "string") {
      const subject = typeof value.subject === "string" ? `${value.subject}\n` : "";
      return subject + (value[k] as string);
    }
    return JSON.stringify(value);
  }
  return null;
}

/** Private-use markers (`\ue200cite\ue202turn0search0\ue201`) out of the text, kept apart. */
function cleanPrivateUse(text: string, markers: string[]): string {
  const wrapped = text.replace(/\ue200([^\ue200\ue201]*)\ue201/g, (m) => {
    markers.push(m.replace(/[\ue000-\uf8ff]/g, " ").trim());
    return "";
  });
  return wrapped.replace(/[\ue000-\uf8ff]/g, "");
}

type CallSpec = Exclude<MappingMessage["tool_calls"], string | undefined>;
type ResultSpec = Exclude<MappingMessage["tool_result"], string | undefined>;

function callOf(raw: unknown, spec: CallSpec | undefined, kindName?: string): { call: Rec; result?: unknown } {
  const c = decodeText(raw);
  if (!isRec(c)) return { call: { name: kindName ?? "tool", arguments: c ?? {} } };
  const fn = isRec(c.function) ? c.function : c;
  const name = spec?.name ? get(c, spec.name) : (fn.name ?? c.tool ?? c.tool_name ?? c.toolName ?? c.function_name);
  let args: unknown = spec?.arguments ? get(c, spec.arguments) : (fn.arguments ?? fn.args ?? fn.input ?? fn.parameters);
  if (args === undefined && !spec?.arguments) {
    // Cline: `{"tool": "readFile", "path": …}`: everything but the name is the arguments.
    const { tool: _t, name: _n, ...rest } = c;
    args = rest;
  }
  const id = spec?.id ? get(c, spec.id) : (c.id ?? c.call_id ?? c.callID ?? c.tool_call_id ?? c.toolCallId);
  // Arguments that are plain text (a code agent's code), not an object: kept whole as its `input`.
  const decoded = decodeText(args) ?? {};
  const call: Rec = { name: typeof name === "string" ? name : (kindName ?? "tool"), arguments: isRec(decoded) ? decoded : { input: decoded } };
  if (typeof id === "string") call.id = id;
  const result = spec?.result ? get(c, spec.result) : undefined;
  return { call, result };
}

/** A tool result's text: Gemini's `[{functionResponse: {response: {output}}}]` and the like, unwrapped. */
function resultText(value: unknown): unknown {
  if (Array.isArray(value) && value.length === 1) return resultText(value[0]);
  if (isRec(value)) {
    if (isRec(value.functionResponse)) return resultText(value.functionResponse.response ?? value.functionResponse);
    const keys = Object.keys(value);
    if (keys.length === 1 && ["output", "result", "content", "text"].includes(keys[0])) return resultText(value[keys[0]]);
  }
  return value;
}

type ReadState = { kindCounts: Map<string, number>; pending: Array<{ id?: string }>; skipped: Record<string, number> };

/** The first segment of a path (`observation.results` → `observation`): the record field it reads. */
const topOf = (p: string | undefined) => (p === undefined || p === "" || p === "." ? undefined : p.split("|").map((x) => x.split(/[.[]/)[0]));

/** The record fields a message spec reads (the rest go to the message's meta by default). */
function fieldsRead(spec: MappingMessage, rule?: MappingKindRule): Set<string> {
  const paths: Array<string | undefined> = [spec.role, spec.kind, spec.thinking, spec.tool_call_id, rule?.content, rule?.thinking];
  for (const c of Array.isArray(spec.content) ? spec.content : [spec.content ?? "content|text"]) paths.push(c);
  for (const t of [spec.tool_calls, rule?.tool_calls, spec.tool_result, rule?.tool_result]) paths.push(typeof t === "string" ? t : t?.path);
  if (rule?.when) for (const c of rule.when) paths.push(c.path);
  const out = new Set<string>();
  for (const p of paths) for (const t of topOf(p) ?? []) if (t) out.add(t);
  return out;
}

/** The kind of a record: the first kind whose `when` holds, else the value of `kind`. */
function kindOf(m: unknown, spec: MappingMessage): string | undefined {
  if (!spec.kinds) return undefined;
  const told = Object.entries(spec.kinds).filter(([, rule]) => rule.when?.length);
  for (const [name, rule] of told) if (allHold(m, rule.when)) return name;
  // Kinds told apart only by their fields: a record none of them describes is of no kind (skipped, counted).
  return spec.kind ? (keyOf(get(m, spec.kind)) ?? "") : told.length ? "" : undefined;
}

/**
 * One file record → file messages in the OpenAI dialect (the chat reader folds them into turns): text with its
 * role, reasoning and calls as assistant messages, results as tool messages naming their call.
 */
function readFields(m: unknown, spec: MappingMessage, state: ReadState, resultsBy: "id" | "order" | "text", ruleUsed?: MappingKindRule): Rec[] {
  // A message written as an array (`["C", "hi"]`) is read by position paths (`[0]`, `[1]`).
  if (!isRec(m) && typeof m !== "string" && !Array.isArray(m)) return [];
  if (anyHolds(m, spec.skip)) {
    state.skipped["not a turn"] = (state.skipped["not a turn"] ?? 0) + 1;
    return [];
  }
  const markers: string[] = [];
  const clean = (t: string | null) => (t !== null && spec.clean?.includes("private_use") ? cleanPrivateUse(t, markers) : t);
  const contentOf = (path: string | string[] | undefined) => {
    if (path === undefined) return textOf(typeof m === "string" ? m : (get(m, "content|text") ?? null));
    const paths = Array.isArray(path) ? path : [path];
    const texts = paths.map((p) => textOf(get(m, p))).filter((t): t is string => t !== null && t !== "");
    return texts.length ? texts.join("\n") : null;
  };
  const rawRole = spec.role_value ?? keyOf(get(m, spec.role));
  const mapRole = (r: string | undefined) => (r !== undefined && spec.roles && Object.prototype.hasOwnProperty.call(spec.roles, r) ? spec.roles[r] : r);
  const kind = kindOf(m, spec);
  const rule: MappingKindRule | undefined = kind !== undefined && spec.kinds && Object.prototype.hasOwnProperty.call(spec.kinds, kind) ? spec.kinds[kind] : undefined;
  const meta: Rec = {};
  const withMeta = (msg: Rec) => {
    if (isRec(m)) {
      // Named fields, or by default every field the mapping does not read: nothing of the record is dropped.
      if (spec.meta) {
        for (const k of spec.meta) if (get(m, k) !== undefined) meta[k] = get(m, k);
      } else {
        const read = fieldsRead(spec, rule ?? ruleUsed);
        for (const [k, v] of Object.entries(m)) if (!read.has(k) && v !== undefined && v !== null && k !== "_key") meta[k] = v;
      }
    }
    if (markers.length) meta.markers = [...markers];
    if (Object.keys(meta).length) msg.meta = { ...meta };
    return msg;
  };

  if (kind !== undefined && spec.kinds) {
    if (!rule || rule.as === "skip") {
      state.skipped[kind || "record"] = (state.skipped[kind || "record"] ?? 0) + 1;
      return [];
    }
    const seen = state.kindCounts.get(kind) ?? 0;
    state.kindCounts.set(kind, seen + 1);
    const content = rule.content ? get(m, rule.content) : spec.content !== undefined ? get(m, Array.isArray(spec.content) ? spec.content[0] : spec.content) : get(m, "content|text");
    if (rule.as === "message") {
      const role = seen === 0 && rule.first_role ? rule.first_role : (rule.role ?? mapRole(rawRole) ?? "assistant");
      if (rule.thinking || rule.tool_calls || rule.tool_result) {
        // A kind holding reasoning, calls or results beside its text: read by those fields.
        const sub: MappingMessage = { ...spec, kind: undefined, kinds: undefined, role: undefined, role_value: role, content: rule.content ?? spec.content, thinking: rule.thinking, tool_calls: rule.tool_calls, tool_result: rule.tool_result };
        return readFields(m, sub, state, resultsBy, rule);
      }
      const text = clean(textOf(content));
      if (text === null || text === "") return [];
      return [withMeta({ role, content: text })];
    }
    if (rule.as === "thinking") {
      const text = clean(textOf(content));
      return text ? [withMeta({ role: "assistant", content: [{ type: "thinking", thinking: text }] })] : [];
    }
    if (rule.as === "tool_call") {
      const callSpec = typeof spec.tool_calls === "object" ? spec.tool_calls : undefined;
      const { call, result } = callOf(rule.content ? content : callSpec ? get(m, callSpec.path) : content, callSpec, kind);
      if (!call.id) call.id = `call_${state.pending.length}_${seen}`;
      state.pending.push({ id: call.id as string });
      const out: Rec[] = [withMeta({ role: "assistant", content: null, tool_calls: [call] })];
      if (result !== undefined && result !== null) {
        state.pending.pop();
        out.push({ role: "tool", content: stringify(resultText(result)), tool_call_id: call.id });
      }
      return out;
    }
    if (rule.as === "tool_result") {
      const waiting = state.pending.shift();
      return [{ role: "tool", content: stringify(resultText(content)), tool_call_id: waiting?.id }];
    }
    // results_in_text: the results of the calls still waiting, found in this record's text.
    const text = textOf(content) ?? "";
    if (!state.pending.length) {
      state.skipped[`${kind} (no call waiting)`] = (state.skipped[`${kind} (no call waiting)`] ?? 0) + 1;
      return [];
    }
    const pieces = rule.after ? text.split(rule.after).slice(1) : [text];
    const out: Rec[] = [];
    for (const piece of pieces.length ? pieces : [text]) {
      const waiting = state.pending.shift();
      if (!waiting) break;
      out.push({ role: "tool", content: piece.trim(), tool_call_id: waiting.id });
    }
    return out;
  }

  const role = mapRole(rawRole);
  const thinkingValue = spec.thinking ? get(m, spec.thinking) : undefined;
  const thinking = clean(textOf(thinkingValue));
  const parts: Rec[] = [];
  if (thinking) parts.push({ type: "thinking", thinking });
  const rawContent = spec.content === undefined ? (typeof m === "string" ? m : get(m, "content|text")) : Array.isArray(spec.content) ? undefined : get(m, spec.content);
  let content: unknown;
  if (Array.isArray(rawContent) && rawContent.some((p) => isRec(p) && typeof p.type === "string")) content = rawContent;
  else content = clean(contentOf(spec.content));
  const msg: Rec = { role: role ?? "user", content: parts.length ? [...parts, ...(typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [])] : content };
  const results: Rec[] = [];
  const calls: Rec[] = [];
  /** This message's calls not yet answered, in order. */
  const open: Array<string | undefined> = [];
  if (spec.tool_calls) {
    const callSpec = typeof spec.tool_calls === "string" ? { path: spec.tool_calls } : spec.tool_calls;
    const value = decodeText(get(m, callSpec.path));
    const list = value === undefined || value === null ? [] : Array.isArray(value) ? value : [value];
    for (const raw of list) {
      const { call, result } = callOf(raw, callSpec);
      calls.push(call);
      if (result !== undefined && result !== null) results.push({ role: "tool", content: stringify(resultText(result)), tool_call_id: call.id });
      else open.push(call.id as string | undefined);
    }
    if (calls.length) msg.tool_calls = calls;
  }
  if (spec.tool_result !== undefined) {
    const resultSpec: ResultSpec = typeof spec.tool_result === "string" ? { path: spec.tool_result } : spec.tool_result;
    const value = get(m, resultSpec.path);
    const list = value === undefined || value === null ? [] : typeof spec.tool_result === "object" && Array.isArray(value) ? value : [value];
    if (list.length && !calls.length && typeof spec.tool_result === "string") {
      // The message is a tool's reply.
      const answers = spec.tool_call_id ? keyOf(get(m, spec.tool_call_id)) : state.pending.shift()?.id;
      return [withMeta({ role: "tool", content: stringify(resultText(value)), tool_call_id: answers })];
    }
    for (const r of list) {
      const named = resultSpec.id ? keyOf(get(r, resultSpec.id)) : undefined;
      const output = resultSpec.content ? get(r, resultSpec.content) : isRec(r) && typeof spec.tool_result === "object" ? (r.content ?? r.output ?? r.result ?? r.text ?? r) : r;
      // Named by id, else the oldest call of this message (then of the record before) still waiting.
      let answers = named;
      if (answers === undefined) answers = open.length ? open.shift() : state.pending.shift()?.id;
      else if (open.includes(answers)) open.splice(open.indexOf(answers), 1);
      results.push({ role: "tool", content: stringify(resultText(output)), tool_call_id: answers });
    }
  }
  if (resultsBy !== "id") for (const id of open) state.pending.push({ id });
  if (role === "tool" || (spec.tool_call_id && get(m, spec.tool_call_id) !== undefined)) {
    const answers = spec.tool_call_id ? keyOf(get(m, spec.tool_call_id)) : state.pending.shift()?.id;
    msg.role = "tool";
    if (answers) msg.tool_call_id = answers;
  }
  if (msg.role === "assistant" && !msg.tool_calls && !parts.length && (msg.content === null || msg.content === "")) {
    if (results.length) return results;
    state.skipped["empty message"] = (state.skipped["empty message"] ?? 0) + 1;
    return [];
  }
  return [withMeta(msg), ...results];
}

const stringify = (v: unknown) => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));

/** File messages → Turnscope messages: roles outside Turnscope's are named so validation says which. */
function toTurnscope(fileMessages: unknown[]): unknown[] {
  const cleaned = fileMessages.map((m) => (isRec(m) && typeof m.role === "string" && !turnscopeRoles.has(m.role) && m.role !== "developer" && m.role !== "function" ? m : m));
  return convertMessages(cleaned).messages;
}

// ——— 2. conversations ———

/** Plain text split on speaker prefixes at the start of a line (`\n\nHuman: …`): literal prefixes, no patterns. */
export function splitTranscript(text: string, speakers: Record<string, string>): Rec[] {
  const names = Object.keys(speakers).sort((a, b) => b.length - a.length);
  const starts: Array<{ at: number; body: number; role: string }> = [];
  let i = 0;
  while (i <= text.length) {
    const lineStart = i === 0 || text[i - 1] === "\n";
    if (lineStart) {
      let j = i;
      while (j < text.length && (text[j] === " " || text[j] === "\t")) j++;
      const name = names.find((n) => text.startsWith(`${n}:`, j));
      if (name) starts.push({ at: i, body: j + name.length + 1, role: speakers[name] });
    }
    const next = text.indexOf("\n", i);
    if (next === -1) break;
    i = next + 1;
  }
  return starts.map((s, k) => ({ role: s.role, content: text.slice(s.body, k + 1 < starts.length ? starts[k + 1].at : text.length).trim() }));
}

function extractText(record: unknown, spec: string | MappingExtract | undefined): string | null {
  if (spec === undefined) return null;
  if (typeof spec === "string") return textOf(get(record, spec));
  const text = textOf(get(record, spec.from));
  if (text === null) return null;
  for (const [start, end] of spec.between) {
    const at = text.indexOf(start);
    if (at === -1) continue;
    const from = at + start.length;
    const stop = text.indexOf(end, from);
    return text.slice(from, stop === -1 ? undefined : stop).trim();
  }
  return null;
}

function recordMeta(record: unknown, mapping: ImportMappingV2, used: string[]): Rec | null {
  if (!isRec(record)) return null;
  const top = new Set(used.map((u) => u.split(/[.[|]/)[0]));
  const keys = mapping.meta ?? Object.keys(record).filter((k) => !top.has(k) && k !== mapping.name && k !== "_key");
  const out: Rec = {};
  for (const k of keys) if (get(record, k) !== undefined) out[k] = get(record, k);
  return Object.keys(out).length ? out : null;
}

const nameOf = (record: unknown, mapping: ImportMappingV2) => (mapping.name ? keyOf(get(record, mapping.name)) : undefined);

function buildTree(items: Item[], mapping: ImportMappingV2, spec: Extract<ImportMappingV2["conversations"], { from: "tree" }>): Built[] {
  const out: Built[] = [];
  // Records that are nodes form one tree; otherwise each record holds its nodes.
  const units: Array<{ record: unknown; nodes: Rec[]; item: Item }> = [];
  const asNodes = (v: unknown): Rec[] => {
    if (Array.isArray(v)) return v.filter(isRec);
    if (isRec(v)) return Object.entries(v).filter(([, n]) => isRec(n)).map(([k, n]) => ({ _key: k, ...(n as Rec) }));
    return [];
  };
  if (!spec.nodes) units.push({ record: null, nodes: items.map((i) => i.value).filter(isRec), item: { value: null, path: "" } });
  else for (const it of items) units.push({ record: it.value, nodes: asNodes(get(it.value, spec.nodes)), item: it });
  for (const [u, unit] of units.entries()) {
    const idOf = (n: Rec) => keyOf(spec.id ? get(n, spec.id) : (n.id ?? n._key));
    const byId = new Map<string, Rec>();
    for (const n of unit.nodes) {
      const id = idOf(n);
      if (id !== undefined) byId.set(id, n);
    }
    const parentOf = new Map<string, string>();
    if (spec.parent) for (const n of unit.nodes) {
      const id = idOf(n);
      const p = keyOf(get(n, spec.parent));
      if (id !== undefined && p !== undefined && byId.has(p)) parentOf.set(id, p);
    }
    else if (spec.children) for (const n of unit.nodes) {
      const kids = get(n, spec.children);
      if (Array.isArray(kids)) for (const k of kids) if (keyOf(k) !== undefined) parentOf.set(keyOf(k) as string, idOf(n) as string);
    }
    const childCount = new Map<string, number>();
    for (const p of parentOf.values()) childCount.set(p, (childCount.get(p) ?? 0) + 1);
    const pathTo = (leaf: string) => {
      const chain: string[] = [];
      const seen = new Set<string>();
      for (let at: string | undefined = leaf; at !== undefined && !seen.has(at); at = parentOf.get(at)) {
        seen.add(at);
        chain.unshift(at);
      }
      return chain;
    };
    const leafId = spec.leaf ? keyOf(get(unit.record, spec.leaf)) : undefined;
    const leaves = leafId !== undefined && byId.has(leafId) ? [leafId] : [...byId.keys()].filter((id) => !childCount.has(id));
    const used = [spec.nodes ?? "", spec.leaf ?? ""];
    for (const [l, leaf] of leaves.entries()) {
      const messages: unknown[] = [];
      for (const id of pathTo(leaf)) {
        const node = byId.get(id) as Rec;
        const message = spec.message ? get(node, spec.message) : node;
        if (message === null || message === undefined) continue;
        // Every leaf a conversation: replies to one node are siblings a comparison can pair.
        const parent = parentOf.get(id);
        const extra = leafId === undefined && parent !== undefined && (childCount.get(parent) ?? 0) > 1 ? { parent_id: parent, message_id: id } : undefined;
        messages.push(extra ? { __extra: extra, value: message } : message);
      }
      out.push({
        name: nameOf(unit.record, mapping),
        meta: recordMeta(unit.record, mapping, used),
        messages,
        format: "fields",
        source: { path: unit.item.path, messagesPath: [unit.item.path, spec.nodes].filter(Boolean).join("."), line: unit.item.line, rawMessages: unit.nodes, wholeConversation: true, raw: leaves.length > 1 && l > 0 ? undefined : unit.record ?? undefined },
      });
    }
    void u;
  }
  return out;
}

function buildSpans(items: Item[], mapping: ImportMappingV2, spec: Extract<ImportMappingV2["conversations"], { from: "spans" }>): Built[] {
  const traces: Array<{ record: unknown; spans: Rec[]; item: Item }> = [];
  if (spec.spans) for (const it of items) traces.push({ record: it.value, spans: (Array.isArray(get(it.value, spec.spans)) ? (get(it.value, spec.spans) as unknown[]) : []).filter(isRec), item: it });
  else {
    // The records are spans: grouped into traces by `trace`, else by their root.
    const idOf = (s: Rec) => keyOf(get(s, spec.id ?? "id"));
    const byId = new Map<string, Rec>();
    for (const it of items) if (isRec(it.value) && idOf(it.value) !== undefined) byId.set(idOf(it.value) as string, it.value);
    const rootOf = (s: Rec): string => {
      if (spec.trace) return keyOf(get(s, spec.trace)) ?? "";
      if (spec.dotted_order) return (keyOf(get(s, spec.dotted_order)) ?? "").split(".")[0];
      const seen = new Set<string>();
      let at: Rec = s;
      for (;;) {
        const p = spec.parent ? keyOf(get(at, spec.parent)) : undefined;
        if (p === undefined || !byId.has(p) || seen.has(p)) return idOf(at) ?? "";
        seen.add(p);
        at = byId.get(p) as Rec;
      }
    };
    const groups = new Map<string, { spans: Rec[]; item: Item }>();
    for (const it of items) {
      if (!isRec(it.value)) continue;
      const key = rootOf(it.value);
      const g = groups.get(key);
      if (g) g.spans.push(it.value);
      else groups.set(key, { spans: [it.value], item: it });
    }
    for (const g of groups.values()) traces.push({ record: null, spans: g.spans, item: g.item });
  }
  const out: Built[] = [];
  for (const t of traces) {
    let spans = t.spans;
    if (spec.order) spans = [...spans].sort((a, b) => String(get(a, spec.order) ?? "").localeCompare(String(get(b, spec.order) ?? "")));
    else if (spec.dotted_order) spans = [...spans].sort((a, b) => String(get(a, spec.dotted_order) ?? "").localeCompare(String(get(b, spec.dotted_order) ?? "")));
    const calls = spans.filter((s) => allHold(s, spec.model_call));
    const last = calls[calls.length - 1];
    const messages = last ? [...chatMessagesIn(get(last, spec.input), "input"), ...chatMessagesIn(get(last, spec.output), "output")] : [];
    const isRoot = (s: Rec) => (spec.parent ? get(s, spec.parent) === undefined || get(s, spec.parent) === null : spec.dotted_order ? !String(get(s, spec.dotted_order) ?? "").includes(".") : false);
    const root = spans.find(isRoot);
    const meta: Rec = { ...(recordMeta(t.record, mapping, [spec.spans ?? ""]) ?? {}) };
    if (!t.record && root) {
      for (const [k, v] of Object.entries(root)) if (!["inputs", "outputs", "input", "output"].includes(k) && v !== undefined && v !== null) meta[k] = v;
    }
    // Every span in the conversation's meta: earlier calls, retrievals, tools, and the last model call without its
    // input (those messages are the conversation; its output's other fields — usage, finish reason — stay here).
    const inputKey = spec.input.split(/[.[|]/)[0];
    const kept = spans.map((s) => (s === last && inputKey ? Object.fromEntries(Object.entries(s).filter(([k]) => k !== inputKey)) : s));
    if (kept.length > 1 || (kept.length === 1 && kept[0] !== root)) meta.spans = kept;
    out.push({
      name: nameOf(t.record ?? root, mapping) ?? keyOf(root?.name),
      meta: Object.keys(meta).length ? meta : null,
      messages,
      format: "chat",
      source: { path: t.item.path, messagesPath: t.item.path, line: t.item.line, rawMessages: spans, wholeConversation: true },
    });
  }
  return out;
}

const defaultSpeakers = { Human: "user", Assistant: "assistant" };

function buildPairs(items: Item[], mapping: ImportMappingV2, spec: Extract<ImportMappingV2["conversations"], { from: "pair" }>): Built[] {
  const out: Built[] = [];
  const speakers = spec.speakers ?? defaultSpeakers;
  items.forEach((it, index) => {
    const r = it.value;
    const sideMessages = (s: MappingSide): unknown[] => {
      if (s.transcript) return splitTranscript(textOf(get(r, s.transcript)) ?? "", speakers);
      if (s.messages) return chatMessagesIn(get(r, s.messages), "input");
      const prompt = extractText(r, spec.prompt);
      const reply = extractText(r, s.reply);
      return [...(prompt !== null ? [{ role: "user", content: prompt }] : []), ...(reply !== null ? [{ role: "assistant", content: reply }] : [])];
    };
    let chosen: "a" | "b" | "tie" | null = spec.chosen ?? null;
    const choiceValues: Rec = {};
    if (spec.choice?.length) {
      const picks = spec.choice.map((c) => {
        const v = get(r, c.path);
        choiceValues[c.path] = v;
        return c.a.some((x) => x === v) ? "a" : c.b.some((x) => x === v) ? "b" : "tie";
      });
      chosen = picks.every((p) => p === picks[0]) ? picks[0] : "tie";
    }
    const pairId = `pair:${nameOf(r, mapping) ?? index}`;
    const used = [spec.a.transcript, spec.a.messages, spec.b.transcript, spec.b.messages, typeof spec.a.reply === "string" ? spec.a.reply : spec.a.reply?.from, typeof spec.b.reply === "string" ? spec.b.reply : spec.b.reply?.from, typeof spec.prompt === "string" ? spec.prompt : spec.prompt?.from].filter((x): x is string => !!x);
    const base = recordMeta(r, mapping, used);
    for (const side of ["a", "b"] as const) {
      const s = spec[side];
      const messages = sideMessages(s).map((m) => (isRec(m) ? { ...m } : m));
      const lastReply = [...messages].reverse().find((m) => isRec(m) && m.role === "assistant") as Rec | undefined;
      const rank = chosen === null ? undefined : chosen === "tie" ? 0 : chosen === side ? 0 : 1;
      if (lastReply) lastReply.meta = { ...(isRec(lastReply.meta) ? lastReply.meta : {}), parent_id: pairId, message_id: `${pairId}:${side}`, ...(rank !== undefined ? { rank } : {}) };
      const label = s.label ? get(r, s.label) : undefined;
      const pair: Rec = { id: pairId, side, chosen: chosen === null ? null : chosen === "tie" ? "tie" : chosen === side };
      if (label !== undefined) pair.label = label;
      if (Object.keys(choiceValues).length) pair.choice = choiceValues;
      out.push({
        name: `${nameOf(r, mapping) ?? `pair ${index + 1}`} · ${label ?? side}`,
        meta: { ...(base ?? {}), pair },
        messages,
        format: "chat",
        source: { path: it.path, messagesPath: it.path, line: it.line, raw: side === "a" ? r : undefined, rawMessages: side === "a" ? [r] : [], wholeConversation: true },
      });
    }
  });
  return out;
}

function buildGroups(items: Item[], mapping: ImportMappingV2, spec: Extract<ImportMappingV2["conversations"], { from: "group" }>): Built[] {
  const groups = new Map<string, Item[]>();
  for (const it of items) {
    const key = spec.by ? (keyOf(get(it.value, spec.by)) ?? "") : "";
    const g = groups.get(key);
    if (g) g.push(it);
    else groups.set(key, [it]);
  }
  const out: Built[] = [];
  for (const [key, members] of groups) {
    let messages: unknown[] = members.map((m) => m.value);
    if (spec.message_id) {
      // Parts of one message (a message id on each): one message, its role the first any of them names.
      const byMessage = new Map<string, unknown[]>();
      const order: string[] = [];
      for (const m of members) {
        const id = keyOf(get(m.value, spec.message_id)) ?? `(no id ${order.length})`;
        if (!byMessage.has(id)) {
          byMessage.set(id, []);
          order.push(id);
        }
        byMessage.get(id)!.push(m.value);
      }
      messages = order.map((id) => ({ __parts: byMessage.get(id) }));
    }
    out.push({
      name: key || undefined,
      meta: spec.by ? { [spec.by.split("|")[0]]: key } : null,
      messages,
      format: "fields",
      source: { path: members[0].path, messagesPath: members[0].path, line: members[0].line, rawMessages: members.map((m) => m.value), wholeConversation: true },
    });
  }
  return out;
}

function buildPerRecord(items: Item[], mapping: ImportMappingV2, spec: Extract<ImportMappingV2["conversations"], { from: "records" }>): Built[] {
  return items.map((it) => {
    const raw = get(it.value, spec.messages);
    const list = Array.isArray(raw) ? raw : isRec(raw) ? [raw] : [];
    return {
      name: nameOf(it.value, mapping),
      meta: recordMeta(it.value, mapping, [spec.messages]),
      messages: list,
      format: "fields" as const,
      source: { path: it.path, messagesPath: [it.path, spec.messages].filter((x) => x && x !== ".").join("."), line: it.line, raw: it.value, rawMessages: list, wholeConversation: true },
    };
  });
}

function buildTranscripts(items: Item[], mapping: ImportMappingV2, spec: Extract<ImportMappingV2["conversations"], { from: "transcript" }>): Built[] {
  return items.map((it) => ({
    name: nameOf(it.value, mapping),
    meta: recordMeta(it.value, mapping, [spec.field]),
    messages: splitTranscript(textOf(get(it.value, spec.field)) ?? "", spec.speakers),
    format: "chat" as const,
    source: { path: it.path, messagesPath: it.path, line: it.line, raw: it.value, rawMessages: [get(it.value, spec.field)], wholeConversation: true },
  }));
}

// ——— the whole ———

/** Read a parsed upload with a version 2 mapping; what does not fit is left for validation to name. */
export function applyMappingV2(parsed: Parsed, mapping: ImportMappingV2): Normalised {
  if (parsed.kind === "csv") {
    return { format: "mapping", data: {}, errors: [{ path: "(file)", message: "A version 2 mapping reads JSON or JSON Lines, not CSV", suggestion: "Import the CSV without a mapping (one row per message)" }] };
  }
  const { items, skipped, read } = prepareRecords(parsed, mapping);
  if (!items.length) {
    const where = mapping.records?.path === undefined ? "(root)" : String(mapping.records.path);
    return {
      format: "mapping",
      data: {},
      errors: [{ path: where, message: `The mapping finds no records at '${where}'${read ? ` (${read} read, all skipped by 'where'/'skip')` : ""}`, suggestion: "Set 'records.path' to the list of records (\"\" for a top-level list or JSON Lines), or loosen 'records.where'" }],
    };
  }
  const c = mapping.conversations;
  const built =
    c.from === "tree" ? buildTree(items, mapping, c)
    : c.from === "spans" ? buildSpans(items, mapping, c)
    : c.from === "pair" ? buildPairs(items, mapping, c)
    : c.from === "group" ? buildGroups(items, mapping, c)
    : c.from === "transcript" ? buildTranscripts(items, mapping, c)
    : buildPerRecord(items, mapping, c);
  const spec: MappingMessage = mapping.message ?? { format: built[0]?.format ?? "fields" };
  const format = spec.format ?? (mapping.message ? "fields" : (built[0]?.format ?? "fields"));
  const resultsBy = mapping.results?.by ?? (spec.tool_call_id ? "id" : spec.kinds && Object.values(spec.kinds).some((k) => k.as === "results_in_text") ? "text" : "order");
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  const unread: NonNullable<Normalised["errors"]> = [];
  for (const b of built) {
    const state: ReadState = { kindCounts: new Map(), pending: [], skipped };
    const fileMessages: unknown[] = [];
    for (const raw of b.messages) {
      const extra = isRec(raw) && isRec(raw.__extra) ? raw.__extra : undefined;
      const value = extra ? (raw as Rec).value : raw;
      let read: unknown[];
      if (isRec(value) && Array.isArray(value.__parts)) {
        // Parts of one message: the role any of them names, each part read as its kind.
        const role = value.__parts.map((p) => keyOf(get(p, spec.role))).find((r) => r !== undefined);
        const mapped = role !== undefined && spec.roles && Object.prototype.hasOwnProperty.call(spec.roles, role) ? spec.roles[role] : role;
        read = value.__parts.flatMap((p) => {
          const kind = spec.kind ? keyOf(get(p, spec.kind)) : undefined;
          if (spec.kinds && (kind === undefined || !Object.prototype.hasOwnProperty.call(spec.kinds, kind)) && keyOf(get(p, spec.role)) !== undefined) return [];
          return readFields(p, spec, state, resultsBy).map((fm) => (mapped !== undefined && fm.role !== "tool" && !(spec.kinds && kind && spec.kinds[kind]?.role) && !(spec.kinds && kind && spec.kinds[kind]?.first_role) ? { ...fm, role: mapped } : fm));
        });
      } else if (format === "chat") read = [chatMessage(value)];
      else read = readFields(value, spec, state, resultsBy);
      if (extra && read.length) {
        const first = read.find((m) => isRec(m) && m.role !== "tool") as Rec | undefined;
        if (first) first.meta = { ...(isRec(first.meta) ? first.meta : {}), ...extra };
      }
      fileMessages.push(...read);
    }
    const conversation: Rec = { messages: toTurnscope(fileMessages) };
    if (b.messages.length && !(conversation.messages as unknown[]).length) {
      // The file gave this conversation messages and the mapping read none: a refusal, not an empty conversation.
      const kinds = [...new Set(b.messages.map((x) => (Array.isArray(x) ? "lists" : x === null ? "null" : isRec(x) ? "objects" : `${typeof x}s`)))].join(", ");
      unread.push({
        path: b.source.messagesPath || b.source.path || "(root)",
        message: `The mapping reads none of its ${b.messages.length} messages (${kinds}): ${format === "chat" ? "none is a chat message the reader knows" : "the message fields it names hold no text, call or result there"}`,
        suggestion: "Point 'message.role' and 'message.content' at the fields (or positions, `[0]`, `[1]`) that hold each message's speaker and text",
      });
    }
    if (b.name !== undefined) conversation.name = b.name;
    conversation.meta = b.meta;
    conversations.push(conversation);
    sources.push(b.source);
  }
  if (unread.length) return { format: "mapping", data: {}, errors: unread.slice(0, 20) };
  keepFileFields(parsed, mapping, conversations);
  const messages = conversations.reduce<number>((n, cv) => n + ((cv as Rec).messages as unknown[]).length, 0);
  return {
    format: "mapping",
    data: { conversations },
    sources,
    records: {
      inFile: read,
      unit: "records",
      skipped,
      reasons: [`read with a version 2 mapping (conversations from ${c.from}): ${read} records → ${conversations.length} conversations, ${messages} messages`],
    },
  };
}

/** The file's fields beside its record list (a JSON object's other keys): kept once, in the first conversation's meta as `file`. */
function keepFileFields(parsed: Parsed, mapping: ImportMappingV2, conversations: unknown[]): void {
  const p = mapping.records?.path;
  if (parsed.kind !== "json" || !isRec(parsed.value) || p === undefined || p === "") return;
  const listKeys = new Set((Array.isArray(p) ? p : [p]).map((x) => x.split(/[.[|]/)[0]));
  const rest = Object.keys(parsed.value).filter((k) => !listKeys.has(k));
  const first = conversations[0];
  if (!rest.length || !isRec(first)) return;
  const file: Rec = {};
  for (const k of rest) file[k] = (parsed.value as Rec)[k];
  first.meta = { ...(isRec(first.meta) ? first.meta : {}), file };
}
