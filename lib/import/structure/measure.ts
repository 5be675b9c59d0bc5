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
const structural = new Set(["role", "from", "type", "id", "tool_call_id", "tool_use_id", "call_id", "index", "signature", "object", "timestamp"]);

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
  else if (isRecord(value)) for (const [k, v] of Object.entries(value)) if (!skip.has(k)) leaves(v, out, depth + 1, skip);
}

/** Tool calls in the file: a name with arguments or input; each call id counted once (files often repeat a call). */
function callsOf(value: unknown, ids: Set<string>, counter: { anonymous: number }, depth = 0): void {
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
    const id = value.id ?? value.call_id ?? value.tool_call_id;
    if (typeof id === "string" && id) ids.add(id);
    else counter.anonymous++;
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
  const ids = new Set<string>();
  const counter = { anonymous: 0 };
  callsOf(fileValue, ids, counter);
  const callsInFile = ids.size + counter.anonymous;
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
  const everyCall = [...ids].every((id) => storedIds.has(id)) && storedCalls >= callsInFile;
  const textKept = total ? kept / total : 1;
  return { mapping, imported: true, textKept, callsInFile, callsStored: storedCalls, passes: textKept >= 0.99 && everyCall };
}
