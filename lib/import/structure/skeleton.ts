/**
 * A bounded skeleton of a parsed file, for a model asked to write a mapping (issue 49.3): keys, types,
 * sampled values (cut short) and sizes — never the whole file. A list shows its length and its first
 * elements' shapes (distinct shapes first); JSON Lines show their count and the first lines' shapes.
 * Pure: it runs on the input pool beside the checks.
 */
import type { ParseResult } from "../parse";

type Parsed = Extract<ParseResult, { ok: true }>;

const MAX_CHARS = 6000;
const MAX_DEPTH = 7;
const MAX_KEYS = 30;
const MAX_ITEMS = 3;
const MAX_STRING = 80;

const typeOf = (v: unknown): string => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/** A shape's signature (its keys, or its type), to show each kind of element once. */
function signature(v: unknown): string {
  if (v && typeof v === "object" && !Array.isArray(v)) return Object.keys(v).sort().join(",");
  return typeOf(v);
}

function sketch(v: unknown, depth: number): unknown {
  if (typeof v === "string") {
    const t = v.trim();
    // JSON inside a string is shown as what it holds, marked so.
    if ((t.startsWith("{") || t.startsWith("[")) && t.length > 1 && depth < MAX_DEPTH) {
      try {
        return { "(JSON text)": sketch(JSON.parse(t), depth + 1) };
      } catch {
        // plain text
      }
    }
    return v.length > MAX_STRING ? `${v.slice(0, MAX_STRING)}… (${v.length} chars)` : v;
  }
  if (typeof v !== "object" || v === null) return v;
  if (depth >= MAX_DEPTH) return Array.isArray(v) ? `(array of ${v.length})` : `(object, ${Object.keys(v).length} keys)`;
  if (Array.isArray(v)) {
    const seen = new Set<string>();
    const picked: unknown[] = [];
    for (const item of v) {
      const sig = signature(item);
      // Objects and lists once per shape; plain values (a [speaker, text] pair's parts) as they come.
      if (seen.has(sig) && typeof item === "object" && item !== null) continue;
      seen.add(sig);
      picked.push(item);
      if (picked.length >= MAX_ITEMS) break;
    }
    const shown = picked.map((item) => sketch(item, depth + 1));
    return v.length > shown.length ? [...shown, `(${v.length} items in all, ${seen.size}${seen.size >= MAX_ITEMS ? "+" : ""} shapes)`] : shown;
  }
  const entries = Object.entries(v as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [k, x] of entries.slice(0, MAX_KEYS)) out[k] = sketch(x, depth + 1);
  if (entries.length > MAX_KEYS) out["(more keys)"] = entries.slice(MAX_KEYS).map(([k]) => k).slice(0, 50);
  return out;
}

/** The file's skeleton as JSON text, at most ~6,000 characters; undefined for CSV (its header says it). */
export function skeletonOf(parsed: Parsed): string | undefined {
  if (parsed.kind === "csv") return undefined;
  const value = parsed.kind === "jsonl" ? { "(JSON Lines)": parsed.lines.length, "(first lines)": parsed.lines.slice(0, 6).map((l) => l.value) } : parsed.value;
  for (let cut = 0; cut < 4; cut++) {
    const text = JSON.stringify(sketch(value, cut), null, 1);
    if (text.length <= MAX_CHARS) return text;
  }
  return JSON.stringify(sketch(value, MAX_DEPTH - 2)).slice(0, MAX_CHARS);
}
