/**
 * How well the structural reader alone reads a file, every named adapter left out: the best mapping its search
 * finds (./search.ts: version 1 or 2, scored on a sample, checked on the file), applied through the ordinary mapping path (checkUpload with that mapping, as the import page sends it),
 * then counted against the file — the share of the file's text kept (every string, JSON text decoded, minus
 * values that name rather than say) and its tool calls (objects with a name and arguments or input, each
 * call id once) found among the stored tool_call steps. A file passes with ≥ 99% of its text and every call.
 */
import type { AnyImportMapping } from "@/lib/schemas/imports";
import { checkUpload } from "../index";
import { decodeUpload } from "../decode";
import { isRecord } from "../issues";
import { parseUpload } from "../parse";
import { searchMappings } from "./search";

export type StructuralMeasure = {
  mapping?: AnyImportMapping;
  imported: boolean;
  /** Why it did not import (the first error), when it did not. */
  reason?: string;
  textKept: number;
  callsInFile: number;
  callsStored: number;
  passes: boolean;
};

/** Values that say which thing or what kind, not what was said. */
// `status` and `state` are lifecycle flags (`done`, `output-available`, `completed`), as the import's own text
// accounting and the search's scorer count `status`.
const structural = new Set(["role", "from", "type", "id", "tool_call_id", "tool_use_id", "call_id", "index", "signature", "object", "timestamp", "status", "state"]);
/** A call's id under any spelling (`toolCallId`, `source_call_id`, `callID`): it links a result to its call, as `call_id` does. */
const callIdKey = /(^|_)call_?id$|callid$|tool_?use_?id$/i;
const isStructural = (k: string, skip: ReadonlySet<string>) => skip.has(k) || callIdKey.test(k);

function leaves(value: unknown, out: string[], depth = 0, skip: ReadonlySet<string> = structural): void {
  if (depth > 64) return;
  if (typeof value === "string") {
    const t = value.trimStart();
    if (t.startsWith("{") || t.startsWith("[")) {
      try {
        return leaves(JSON.parse(value), out, depth + 1, skip);
      } catch {
        // text, not JSON
      }
    }
    if (value.trim()) out.push(value);
  } else if (Array.isArray(value)) for (const v of value) leaves(v, out, depth + 1, skip);
  else if (isRecord(value)) for (const [k, v] of Object.entries(value)) if (!isStructural(k, skip)) leaves(v, out, depth + 1, skip);
}

/**
 * Tool calls in the file: a name with arguments or input; each call counted once by its ids (files often repeat a
 * call; an OpenAI Responses item has its own `id` beside the `call_id` its output names: either found is the call).
 * Calls with no id are kept as `anonymous` (a task's expected actions have none).
 */
function callsOf(value: unknown, ids: Map<string, string[]>, counter: { anonymous: unknown[] }, depth = 0): void {
  if (depth > 64) return;
  if (Array.isArray(value)) {
    for (const v of value) callsOf(v, ids, counter, depth + 1);
    return;
  }
  if (typeof value === "string") {
    const t = value.trimStart();
    if (t.startsWith("{") || t.startsWith("[")) {
      try {
        callsOf(JSON.parse(value), ids, counter, depth + 1);
      } catch {
        // not JSON
      }
    }
    return;
  }
  if (!isRecord(value)) return;
  const fn = isRecord(value.function) ? value.function : value;
  const named = typeof fn.name === "string" || typeof value.function === "string";
  if (named && ("arguments" in fn || "input" in fn || "arguments" in value)) {
    const own = [value.id, value.call_id, value.tool_call_id].filter((x): x is string => typeof x === "string" && x !== "");
    if (own.length) {
      if (!own.some((id) => ids.has(id))) ids.set(own[0], own);
    } else counter.anonymous.push(value);
    return;
  }
  for (const v of Object.values(value)) callsOf(v, ids, counter, depth + 1);
}

/** The structural reader on one file, as bytes. */
export function measureStructural(bytes: Uint8Array): StructuralMeasure {
  const none = (reason: string, mapping?: AnyImportMapping): StructuralMeasure => ({ mapping, imported: false, reason, textKept: 0, callsInFile: 0, callsStored: 0, passes: false });
  const decoded = decodeUpload(bytes, { maxBytes: Number.MAX_SAFE_INTEGER });
  if (!decoded.ok) return none(decoded.errors[0].message);
  const parsed = parseUpload(decoded.text);
  if (!parsed.ok) return none(parsed.errors[0].message);
  let firstRefusal: { reason: string; mapping: AnyImportMapping } | undefined;
  const found = searchMappings(parsed, (mapping) => {
    const r = checkUpload(bytes, { maxBytes: Number.MAX_SAFE_INTEGER, mapping });
    if (!r.ok) firstRefusal ??= { reason: r.errors[0]?.message ?? "refused", mapping };
    return r;
  });
  if (!found) return firstRefusal ? none(firstRefusal.reason, firstRefusal.mapping) : none("no list of records with a role-like and a content-like field, and no other shape the search knows");
  const { mapping, checked } = found;
  if (!checked.ok) return none("refused", mapping);

  const fileValue = parsed.kind === "jsonl" ? parsed.lines.map((l) => l.value) : parsed.kind === "json" ? parsed.value : [];
  const inFile: string[] = [];
  // The role field's values name who spoke, under whatever name the file gives that field.
  const roleField = "role" in mapping && typeof mapping.role === "string" ? mapping.role : (mapping as { message?: { role?: string } }).message?.role;
  leaves(fileValue, inFile, 0, roleField ? new Set([...structural, roleField.split(/[.|]/).pop() as string]) : structural);
  const stored: string[] = [];
  leaves(checked.conversations, stored);
  const exact = new Set(stored);
  const joined = stored.join("\u0000");
  let total = 0;
  let kept = 0;
  for (const t of inFile) {
    total += t.length;
    if (exact.has(t) || joined.includes(t)) kept += t.length;
  }
  const ids = new Map<string, string[]>();
  const counter = { anonymous: [] as unknown[] };
  callsOf(fileValue, ids, counter);
  const callsInFile = ids.size + counter.anonymous.length;
  const storedIds = new Set<string>();
  let storedCalls = 0;
  for (const c of checked.conversations) {
    for (const m of c.messages) {
      for (const s of m.steps) {
        if (!s.toolCall) continue;
        storedCalls++;
        const id = (s.toolCall as Record<string, unknown>).id;
        if (typeof id === "string") storedIds.add(id);
      }
    }
  }
  // Every call with an id stored as a call (under any of its ids); those without one stored as calls too, or kept
  // whole in what is stored (a task's expected actions, ground truth in the conversation's meta).
  const withId = [...ids.values()].filter((alts) => alts.some((id) => storedIds.has(id))).length;
  const storedAnonymous = Math.max(0, storedCalls - withId);
  const anonymousInMeta = counter.anonymous.filter((c) => {
    const parts: string[] = [];
    leaves(c, parts);
    return parts.every((p) => exact.has(p) || joined.includes(p));
  }).length;
  const everyCall = withId === ids.size && storedAnonymous + anonymousInMeta >= counter.anonymous.length;
  const textKept = total ? kept / total : 1;
  return { mapping, imported: true, textKept, callsInFile, callsStored: storedCalls, passes: textKept >= 0.99 && everyCall };
}
