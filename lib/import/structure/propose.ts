/**
 * The structural reader's proposals in the mapping language, version 2: each detector looks at the shape of a
 * sample of the file (never at its name) and proposes the mapping that shape implies — a parent/child tree with a
 * leaf pointer, messages whose speaker field holds any two alternating values, records of kinds told apart by a
 * field, JSON Lines whose lines are arrays with parts re-sent by id, plain-text transcripts and preference pairs,
 * pairwise judge records, run/span trees whose model calls carry chat messages, lists of bare strings. The search
 * (./search.ts) applies each to a sample, scores it and keeps the best.
 */
import type { ImportMappingV2 } from "@/lib/schemas/import-mapping";
import type { ParseResult } from "../parse";
import { roleAlias } from "../suggestions";
import { decodeText, get, isRec } from "../mapping/paths";

type Parsed = Extract<ParseResult, { ok: true }>;
type Rec = Record<string, unknown>;
const SAMPLE = 60;

const userish = (v: string) => /^(user|human|prompter|customer|me|person|you)$/i.test(v) || roleAlias(v.toLowerCase()) === "user";
const callNameKeys = ["name", "tool", "function_name", "tool_name", "toolName"];
const isCallLike = (v: unknown): boolean =>
  isRec(v) && ((callNameKeys.some((k) => typeof v[k] === "string") && ("args" in v || "arguments" in v || "input" in v)) || (isRec(v.function) && isCallLike(v.function)));
const callIdKeys = ["id", "call_id", "tool_call_id", "toolCallId", "callID"];
/** A call's id field: a usual name, else any `…_id` / `…Id` field holding text on every call (`invocation_id`). */
function callIdKey(calls: Rec[]): string | undefined {
  const keys = Object.keys(calls[0] ?? {}).filter((k) => /(^|_)id$|[a-z]Id$|ID$/.test(k) && calls.every((c) => typeof c[k] === "string"));
  return keys.find((k) => callIdKeys.includes(k)) ?? keys[0];
}

/**
 * Results inside the message that holds the calls, linked to them by id (a step's `observation.results`, each
 * naming its call in `source_call_id`): the path of the list, the field naming the call and the output's field.
 */
function resultsBeside(messages: Rec[], callsKey: string): { path: string; id: string; content?: string } | undefined {
  for (const m of messages) {
    const list = (Array.isArray(m[callsKey]) ? (m[callsKey] as unknown[]) : []).filter(isRec);
    const idKey = callIdKey(list);
    const ids = new Set(idKey ? list.map((c) => c[idKey] as string) : []);
    if (!ids.size) continue;
    const lists: Array<[string, unknown]> = [];
    for (const [k, v] of Object.entries(m)) {
      if (k === callsKey) continue;
      lists.push([k, v]);
      if (isRec(v)) for (const [k2, v2] of Object.entries(v)) lists.push([`${k}.${k2}`, v2]);
    }
    for (const [path, v] of lists) {
      const list = (Array.isArray(v) ? v : [v]).filter(isRec);
      if (!list.length) continue;
      const id = Object.keys(list[0]).find((k) => list.some((r) => typeof r[k] === "string" && ids.has(r[k] as string)));
      if (!id) continue;
      const content = ["content", "output", "result", "text"].find((k) => k in list[0]);
      return { path, id, ...(content ? { content } : {}) };
    }
  }
  return undefined;
}

/** The records of the file: the top-level list, JSON Lines, or the first list of objects under a key (with its path). */
function recordLists(parsed: Parsed): Array<{ path: string; records: unknown[] }> {
  if (parsed.kind === "jsonl") return [{ path: "", records: parsed.lines.slice(0, SAMPLE * 5).map((l) => l.value) }];
  if (parsed.kind !== "json") return [];
  const root = parsed.value;
  if (Array.isArray(root)) return [{ path: "", records: root.slice(0, SAMPLE) }];
  if (!isRec(root)) return [];
  const out = [{ path: "", records: [root] as unknown[] }];
  for (const [k, v] of Object.entries(root)) if (Array.isArray(v) && v.length && v.every(isRec)) out.push({ path: k, records: v.slice(0, SAMPLE) });
  return out;
}

/** A list of message-like records inside a record, and its speaker field whose values alternate (any names). */
function dialogue(records: Rec[]): ImportMappingV2 | undefined {
  const first = records[0];
  if (!first) return undefined;
  for (const [key, list] of Object.entries(first)) {
    if (!Array.isArray(list) || !list.length || !list.every(isRec)) continue;
    const messages = records.flatMap((r) => (Array.isArray(r[key]) ? (r[key] as unknown[]) : [])).filter(isRec).slice(0, 400);
    const speakerKeys = Object.keys(messages[0]).filter((k) => messages.every((m) => typeof m[k] === "string"));
    for (const sk of speakerKeys) {
      const values = messages.map((m) => m[sk] as string);
      const distinct = [...new Set(values)];
      if (distinct.length < 2 || distinct.length > 4 || !distinct.some(userish) || distinct.some((d) => d.length > 30)) continue;
      // A dialogue alternates: most neighbours differ.
      let changes = 0;
      for (let i = 1; i < values.length; i++) if (values[i] !== values[i - 1]) changes++;
      if (values.length > 2 && changes / (values.length - 1) < 0.5) continue;
      const roles: Record<string, string> = {};
      for (const d of distinct) roles[d] = userish(d) ? "user" : d === "system" ? "system" : d === "tool" || roleAlias(d.toLowerCase()) === "tool" ? "tool" : "assistant";
      const stringKeys = Object.keys(messages[0]).filter((k) => k !== sk && messages.some((m) => typeof m[k] === "string"));
      const content = ["content", "text", "message", "value", "body"].find((k) => stringKeys.includes(k)) ?? stringKeys.sort((a, b) => String(messages[0][b]).length - String(messages[0][a]).length)[0];
      if (!content) continue;
      // A speaker whose every message is a call written as JSON text (ShareGPT's `function_call`): kinds of records,
      // the calls' results the tool speaker's messages after them, in order.
      const callSpeakers = distinct.filter((d) => messages.filter((m) => m[sk] === d).every((m) => isCallLike(decodeText(m[content]))));
      if (callSpeakers.length) {
        const kinds: NonNullable<NonNullable<ImportMappingV2["message"]>["kinds"]> = {};
        for (const d of distinct) kinds[d] = callSpeakers.includes(d) ? { as: "tool_call" } : roles[d] === "tool" ? { as: "tool_result" } : { as: "message", role: roles[d] };
        return { version: 2, conversations: { from: "records", messages: key }, message: { kind: sk, kinds, content } };
      }
      const message: ImportMappingV2["message"] = { role: sk, roles, content };
      const callsKey = Object.keys(messages.find((m) => Object.keys(m).some((k) => Array.isArray(m[k]) && (m[k] as unknown[]).some(isCallLike))) ?? {}).find((k) =>
        messages.some((m) => Array.isArray(m[k]) && (m[k] as unknown[]).some(isCallLike)),
      );
      if (callsKey) {
        const call = messages.flatMap((m) => (Array.isArray(m[callsKey]) ? (m[callsKey] as unknown[]) : [])).find(isCallLike) as Rec;
        const result = ["result", "output", "response"].find((k) => k in call);
        const allCalls = messages.flatMap((m) => (Array.isArray(m[callsKey]) ? (m[callsKey] as unknown[]) : [])).filter(isCallLike) as Rec[];
        const id = callIdKey(allCalls);
        const ownId = id && !callIdKeys.includes(id) ? { id } : {};
        message.tool_calls = result || (id && !callIdKeys.includes(id)) ? { path: callsKey, ...(result ? { result } : {}), ...ownId } : callsKey;
        const beside = result ? undefined : resultsBeside(messages, callsKey);
        if (beside) message.tool_result = beside;
      }
      const thinking = ["thoughts", "thinking", "reasoning", "reasoning_content"].find((k) => messages.some((m) => m[k] !== undefined && m[k] !== null));
      if (thinking) message.thinking = thinking;
      const callId = ["tool_call_id", "toolCallId", "call_id"].find((k) => messages.some((m) => typeof m[k] === "string"));
      if (callId) message.tool_call_id = callId;
      return { version: 2, conversations: { from: "records", messages: key }, message };
    }
  }
  return undefined;
}

/** Nodes keyed by id with parent and children links, a leaf pointer beside them (a ChatGPT-style export). */
function tree(records: Rec[]): ImportMappingV2 | undefined {
  const first = records[0];
  if (!first) return undefined;
  for (const [key, nodes] of Object.entries(first)) {
    if (!isRec(nodes)) continue;
    const list = Object.values(nodes).filter(isRec);
    if (list.length < 2 || !list.every((n) => "parent" in n || "children" in n)) continue;
    const leaf = Object.keys(first).find((k) => typeof first[k] === "string" && Object.prototype.hasOwnProperty.call(nodes, first[k] as string));
    const messageKey = ["message", "msg", "data"].find((k) => list.some((n) => isRec(n[k])));
    const messages = list.map((n) => (messageKey ? n[messageKey] : n)).filter(isRec);
    const rolePath = ["author.role", "role", "sender", "from"].find((p) => messages.some((m) => typeof get(m, p) === "string"));
    const contentPath = ["content.parts", "content.text", "content", "text"].find((p) => messages.some((m) => get(m, p) !== undefined));
    if (!rolePath || !contentPath) continue;
    const skip: NonNullable<NonNullable<ImportMappingV2["message"]>["skip"]> = [{ path: contentPath, empty: true }];
    if (messages.some((m) => get(m, "metadata.is_visually_hidden_from_conversation") !== undefined)) skip.unshift({ path: "metadata.is_visually_hidden_from_conversation", equals: true });
    const message: ImportMappingV2["message"] = { role: rolePath, content: contentPath, skip };
    if (messages.some((m) => /[\ue000-\uf8ff]/.test(JSON.stringify(get(m, contentPath) ?? "")))) message.clean = ["private_use"];
    const name = ["title", "name"].find((k) => typeof first[k] === "string");
    return {
      version: 2,
      conversations: { from: "tree", nodes: key, parent: list.some((n) => "parent" in n) ? "parent" : undefined, children: list.some((n) => "parent" in n) ? undefined : "children", message: messageKey, leaf },
      message,
      ...(name ? { name } : {}),
    };
  }
  return undefined;
}

/** A UI event log: records of kinds told apart by a field (`say` / `ask`), text in `text`, calls as JSON text. */
function kindLog(records: Rec[]): ImportMappingV2 | undefined {
  if (records.length < 3 || !records.every((r) => typeof r.text === "string" || r.text === undefined)) return undefined;
  const kindKeys = ["say", "ask", "kind", "event", "type"].filter((k) => records.some((r) => typeof r[k] === "string"));
  const sub = kindKeys.filter((k) => k === "say" || k === "ask");
  const kind = sub.length ? sub.join("|") : kindKeys[0];
  if (!kind) return undefined;
  const kinds: NonNullable<NonNullable<ImportMappingV2["message"]>["kinds"]> = {};
  const seen: string[] = [];
  for (const r of records) {
    const k = get(r, kind);
    if (typeof k === "string" && !seen.includes(k)) seen.push(k);
  }
  let firstText: string | undefined;
  let calls = false;
  for (const k of seen) {
    const texts = records.filter((r) => get(r, kind) === k).map((r) => r.text);
    const decoded = texts.map(decodeText);
    if (decoded.some((d) => isRec(d) && typeof d.request === "string")) {
      const marker = decoded.some((d) => isRec(d) && String(d.request).includes("] Result:")) ? "] Result:" : undefined;
      kinds[k] = { as: "results_in_text", content: "text.request", ...(marker ? { after: marker } : {}) };
    } else if (decoded.some((d) => isRec(d) && (typeof d.tool === "string" || typeof d.name === "string"))) {
      kinds[k] = { as: "tool_call", content: "text" };
      calls = true;
    } else if (/reason|think/i.test(k)) kinds[k] = { as: "thinking" };
    else if (/user|feedback|human/i.test(k)) kinds[k] = { as: "message", role: "user" };
    else if (/error|checkpoint|finished|retried|progress|status|resume|api_req|condense|command_output|mistake/i.test(k)) kinds[k] = { as: "skip" };
    else if (texts.some((t) => typeof t === "string" && t.trim())) {
      kinds[k] = firstText === undefined ? { as: "message", role: "assistant", first_role: "user" } : { as: "message", role: "assistant" };
      firstText ??= k;
    }
  }
  if (!firstText) return undefined;
  if (!calls) for (const k of Object.keys(kinds)) if (kinds[k].as === "results_in_text") kinds[k] = { as: "skip" };
  return { version: 2, records: { decode_json: ["text"], kind }, conversations: { from: "group", by: "" }, message: { kind, kinds, content: "text" } };
}

/** JSON Lines whose lines are arrays `[kind, payload]`: message parts re-sent by id, a role on the message's own record. */
function arrayLines(parsed: Parsed): ImportMappingV2 | undefined {
  if (parsed.kind !== "jsonl") return undefined;
  const lines = parsed.lines.slice(0, SAMPLE * 5).map((l) => l.value);
  if (!lines.length || !lines.every((l) => Array.isArray(l) && typeof l[0] === "string" && l.length >= 2)) return undefined;
  const payloads = lines.map((l) => (l as unknown[])[1]).filter(isRec);
  const parts = payloads.filter((p) => isRec(p.part) && typeof (p.part as Rec).id === "string" && typeof (p.part as Rec).messageID === "string");
  const infos = payloads.filter((p) => isRec(p.info) && typeof (p.info as Rec).role === "string");
  if (!parts.length || !infos.length) return undefined;
  const partKinds = lines.filter((l) => isRec((l as unknown[])[1]) && isRec(((l as unknown[])[1] as Rec).part)).map((l) => (l as unknown[])[0] as string);
  const infoKinds = lines.filter((l) => isRec((l as unknown[])[1]) && isRec(((l as unknown[])[1] as Rec).info) && typeof (((l as unknown[])[1] as Rec).info as Rec).role === "string").map((l) => (l as unknown[])[0] as string);
  const kinds = [...new Set([...partKinds, ...infoKinds])];
  const types = [...new Set(parts.map((p) => (p.part as Rec).type).filter((t): t is string => typeof t === "string"))];
  const rules: NonNullable<NonNullable<ImportMappingV2["message"]>["kinds"]> = {};
  for (const t of types) rules[t] = t === "text" ? { as: "message" } : /reason|think/.test(t) ? { as: "thinking" } : t === "tool" ? { as: "tool_call" } : { as: "skip" };
  const session = parts.some((p) => typeof (p.part as Rec).sessionID === "string") ? "payload.part.sessionID|payload.info.sessionID" : "";
  return {
    version: 2,
    records: { line_fields: ["kind", "payload"], where: [{ path: "kind", in: kinds }], kind: "kind", collapse: { by: "payload.part.id|payload.info.id" } },
    conversations: { from: "group", by: session, message_id: "payload.part.messageID|payload.info.id" },
    message: {
      role: "payload.info.role",
      kind: "payload.part.type",
      kinds: rules,
      content: "payload.part.text",
      tool_calls: { path: "payload.part", name: "tool", arguments: "state.input", id: "callID", result: "state.output" },
    },
  };
}

/** Speaker prefixes a text is split on (`Human:` / `Assistant:` at the start of lines), when it has two alternating. */
function speakersOf(text: string): Record<string, string> | undefined {
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/(?:^|\n)([A-Z][A-Za-z]{1,20}):/g)) counts.set(m[1], (counts.get(m[1]) ?? 0) + 1);
  const names = [...counts.keys()];
  if (names.length < 2 || names.length > 3) return undefined;
  const user = names.find(userish);
  if (!user) return undefined;
  const out: Record<string, string> = {};
  for (const n of names) out[n] = n === user ? "user" : /system/i.test(n) ? "system" : "assistant";
  return out;
}

/** Plain-text transcripts: one per record is a conversation; two are a preference pair. */
function transcripts(records: Rec[]): ImportMappingV2 | undefined {
  const first = records[0];
  if (!first) return undefined;
  const fields = Object.keys(first).filter((k) => typeof first[k] === "string" && speakersOf(first[k] as string) && records.every((r) => typeof r[k] === "string"));
  if (!fields.length) return undefined;
  const speakers = speakersOf(first[fields[0]] as string) as Record<string, string>;
  if (fields.length === 1) return { version: 2, conversations: { from: "transcript", field: fields[0], speakers } };
  const preferred = fields.find((f) => /chosen|preferred|better|winner|accepted/i.test(f));
  const [a, b] = preferred ? [preferred, fields.find((f) => f !== preferred) as string] : [fields[0], fields[1]];
  return { version: 2, conversations: { from: "pair", a: { transcript: a }, b: { transcript: b }, speakers, ...(preferred ? { chosen: "a" as const } : {}) } };
}

/** Pairwise judge records: both answers inside the judge's prompt between literal markers, the winner of each game. */
function judgePairs(records: Rec[]): ImportMappingV2 | undefined {
  const first = records[0];
  if (!first) return undefined;
  const promptKey = Object.keys(first).find((k) => typeof first[k] === "string" && (first[k] as string).includes("[The Start of Assistant A's Answer]"));
  const winners = Object.keys(first).filter((k) => /winner/i.test(k));
  if (!promptKey || !winners.length) {
    // Chatbot-arena style: two message lists and a winner.
    const a = Object.keys(first).find((k) => /_a$/.test(k) && Array.isArray(first[k]));
    const b = a ? a.replace(/_a$/, "_b") : undefined;
    if (!a || !b || !Array.isArray(first[b]) || !winners.length) return undefined;
    return {
      version: 2,
      conversations: {
        from: "pair",
        a: { messages: a, ...(typeof first.model_a === "string" ? { label: "model_a" } : {}) },
        b: { messages: b, ...(typeof first.model_b === "string" ? { label: "model_b" } : {}) },
        choice: winners.map((w) => ({ path: w, a: ["model_a", "A", "a"], b: ["model_b", "B", "b"] })),
      },
    };
  }
  const side = (x: "A" | "B") => ({
    from: promptKey,
    between: [
      [`[The Start of Assistant ${x}'s Answer]\n`, `\n[The End of Assistant ${x}'s Answer]`],
      [`<|The Start of Assistant ${x}'s Conversation with User|>\n`, `<|The End of Assistant ${x}'s Conversation with User|>`],
    ] as Array<[string, string]>,
  });
  const label = (n: string) => (typeof first[n] === "string" ? { label: n } : {});
  return {
    version: 2,
    conversations: {
      from: "pair",
      prompt: { from: promptKey, between: [["[User Question]\n", "\n\n[The Start of Assistant A's Answer]"]] },
      a: { reply: side("A"), ...label("model_1") },
      b: { reply: side("B"), ...label("model_2") },
      choice: winners.map((w) => ({ path: w, a: ["model_1", "A"], b: ["model_2", "B"] })),
    },
  };
}

/** Run / span trees: runs with a dotted order or parent ids whose model calls carry messages; trace exports of observations. */
function spanTrees(parsed: Parsed, lists: Array<{ path: string; records: unknown[] }>): ImportMappingV2 | undefined {
  if (parsed.kind === "json" && isRec(parsed.value) && Array.isArray(parsed.value.post)) {
    const runs = [...(parsed.value.post as unknown[]), ...(Array.isArray(parsed.value.patch) ? (parsed.value.patch as unknown[]) : [])].filter(isRec);
    if (runs.some((r) => typeof r.dotted_order === "string")) {
      return {
        version: 2,
        records: { path: Array.isArray(parsed.value.patch) ? ["post", "patch"] : "post", collapse: { by: "id", keep: "merge" } },
        conversations: { from: "spans", trace: "trace_id", dotted_order: "dotted_order", model_call: [{ path: "run_type", in: ["llm", "chat_model"] }], input: "inputs", output: "outputs" },
      };
    }
  }
  for (const { path, records } of lists) {
    const recs = records.filter(isRec);
    if (recs.some((r) => typeof r.dotted_order === "string" || "parent_run_id" in r) && recs.some((r) => r.run_type === "llm")) {
      const ops = recs.some((r) => typeof r.operation === "string" || typeof r.op === "string");
      return {
        version: 2,
        records: { ...(path ? { path } : {}), ...(ops || new Set(recs.map((r) => r.id)).size < recs.length ? { collapse: { by: "id", keep: "merge" as const } } : {}) },
        conversations: {
          from: "spans",
          ...(recs.some((r) => typeof r.trace_id === "string") ? { trace: "trace_id" } : {}),
          ...(recs.some((r) => typeof r.dotted_order === "string") ? { dotted_order: "dotted_order" } : { parent: "parent_run_id" }),
          model_call: [{ path: "run_type", in: ["llm", "chat_model"] }],
          input: "inputs",
          output: "outputs",
        },
      };
    }
    const obsKey = recs[0] ? Object.keys(recs[0]).find((k) => Array.isArray(recs[0][k]) && (recs[0][k] as unknown[]).some((o) => isRec(o) && /^generation$/i.test(String(o.type)))) : undefined;
    if (obsKey) {
      const obs = (recs[0][obsKey] as unknown[]).filter(isRec);
      return {
        version: 2,
        ...(path ? { records: { path } } : {}),
        conversations: {
          from: "spans",
          spans: obsKey,
          parent: obs.some((o) => "parentObservationId" in o) ? "parentObservationId" : "parent_observation_id",
          ...(obs.some((o) => "startTime" in o) ? { order: "startTime" } : obs.some((o) => "start_time" in o) ? { order: "start_time" } : {}),
          model_call: [{ path: "type", in: ["GENERATION", "generation"] }],
          input: "input",
          output: "output",
        },
        ...(typeof recs[0].name === "string" ? { name: "name" } : {}),
      };
    }
  }
  return undefined;
}

/** Records holding a list of bare strings (one speaker's turns): its role from where the list is. */
function bareStrings(records: Rec[], path: string): ImportMappingV2 | undefined {
  const first = records[0];
  if (!first) return undefined;
  for (const [k, v] of Object.entries(first)) {
    const candidates: Array<[string, unknown]> = [[k, v]];
    if (Array.isArray(v) && isRec(v[0])) for (const [k2, v2] of Object.entries(v[0] as Rec)) candidates.push([`${k}[0].${k2}`, v2]);
    for (const [p, value] of candidates) {
      if (!Array.isArray(value) || !value.length || !value.every((s) => typeof s === "string")) continue;
      const answers = /choice|answer|response|output|completion/i.test(p);
      return { version: 2, ...(path ? { records: { path } } : {}), conversations: { from: "records", messages: p }, message: { role_value: answers ? "assistant" : "user", content: "." } };
    }
  }
  return undefined;
}

/**
 * Records told apart by the fields they carry, no field naming their kind (an agent's memory: `{task}`, then
 * `{plan, …}`, `{step_number, tool_calls, model_output, observations, …}`, `{output}`): records grouped by their
 * set of keys, each group known by a key only its records have, and read by what its fields hold — a list of
 * calls (with the field holding their result), reasoning, or text (the first group's the user's).
 */
function fieldKinds(records: Rec[]): ImportMappingV2 | undefined {
  if (records.length < 3) return undefined;
  const groups = new Map<string, Rec[]>();
  for (const r of records) {
    const sig = Object.keys(r).sort().join("\u0000");
    const g = groups.get(sig);
    if (g) g.push(r);
    else groups.set(sig, [r]);
  }
  if (groups.size < 2 || groups.size > 12) return undefined;
  const kinds: NonNullable<NonNullable<ImportMappingV2["message"]>["kinds"]> = {};
  let first = true;
  let calls = false;
  for (const members of groups.values()) {
    const keys = Object.keys(members[0]);
    const marker = keys.find((k) => members.every((m) => m[k] !== undefined) && records.every((r) => members.includes(r) || !(k in r)));
    if (!marker) return undefined;
    const present = (k: string) => members.some((m) => m[k] !== undefined && m[k] !== null && m[k] !== "");
    const callKey = keys.find((k) => members.some((m) => Array.isArray(m[k]) && (m[k] as unknown[]).length > 0 && (m[k] as unknown[]).every(isCallLike)));
    const texty = (k: string) => members.some((m) => typeof m[k] === "string" || typeof m[k] === "number") && members.every((m) => m[k] === undefined || m[k] === null || typeof m[k] === "string" || typeof m[k] === "number");
    const thinking = keys.find((k) => /thought|reason|think|plan|scratch/i.test(k) && texty(k) && present(k));
    const when = [{ path: marker, exists: true }];
    if (callKey) {
      calls = true;
      const results = keys.filter((k) => k !== callKey && /observation|result|error|fail/i.test(k) && !/image/i.test(k) && present(k));
      const content = keys.filter((k) => k !== thinking && !results.includes(k) && texty(k) && present(k) && !/(^|_)(id|action)$|code/i.test(k)).sort((a, b) => textLength(members, b) - textLength(members, a))[0];
      kinds[marker] = {
        as: "message",
        role: "assistant",
        when,
        tool_calls: callKey,
        ...(content ? { content } : {}),
        ...(thinking ? { thinking } : {}),
        ...(results.length ? { tool_result: results.join("|") } : {}),
      };
    } else if (thinking && keys.filter((k) => texty(k) && present(k)).length === 1) kinds[marker] = { as: "thinking", when, content: thinking };
    else {
      const content = keys.filter((k) => texty(k) && present(k)).sort((a, b) => textLength(members, b) - textLength(members, a))[0];
      if (!content) kinds[marker] = { as: "skip", when };
      else kinds[marker] = { as: "message", role: first || /task|question|prompt|query|instruction/i.test(content) ? "user" : "assistant", when, content };
    }
    first = false;
  }
  if (!calls) return undefined;
  return { version: 2, conversations: { from: "group", by: "" }, message: { kinds } };
}

const textLength = (records: Rec[], k: string) => records.reduce((n, r) => n + (typeof r[k] === "string" ? (r[k] as string).length : 0), 0);

/** Every version 2 mapping the file's shape suggests. */
export function proposeV2(parsed: Parsed): ImportMappingV2[] {
  const out: ImportMappingV2[] = [];
  const add = (m: ImportMappingV2 | undefined) => m && out.push(m);
  const lists = recordLists(parsed);
  add(arrayLines(parsed));
  add(spanTrees(parsed, lists));
  for (const { path, records } of lists) {
    const recs = records.filter(isRec);
    if (!recs.length) continue;
    const at = (m: ImportMappingV2 | undefined): ImportMappingV2 | undefined => (m && path ? { ...m, records: { ...(m.records ?? {}), path } } : m);
    add(at(tree(recs)));
    add(at(dialogue(recs)));
    add(at(kindLog(recs)));
    add(at(fieldKinds(recs)));
    add(at(transcripts(recs)));
    add(at(judgePairs(recs)));
    add(bareStrings(recs, path));
  }
  return out;
}
