/**
 * Paths and conditions of the mapping language (lib/schemas/import-mapping.ts), pure: reading a value at a
 * path (`a.b[0].c`, `[-1]` the last element, `.` the value itself, `a|b` the first of two paths holding a value, not null),
 * decoding JSON text at a path (`[]` for every element), and testing a condition. Own keys only, so a path can
 * never reach a prototype; nothing here runs anything the file or the mapping says.
 */
import type { MappingCondition } from "@/lib/schemas/import-mapping";

type Rec = Record<string, unknown>;
export const isRec = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);
const own = (obj: object, key: string) => Object.prototype.hasOwnProperty.call(obj, key);

/** `a.b[0].c[-1]` → `["a", "b", 0, "c", -1]`; `[]` → `"[]"` (every element). */
export function tokens(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  for (const part of path.split(".")) {
    if (part === "") continue;
    const m = /^([^[\]]*)((?:\[-?\d*\])*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    if (m[1]) out.push(m[1]);
    for (const idx of m[2].match(/\[(-?\d*)\]/g) ?? []) {
      const inner = idx.slice(1, -1);
      out.push(inner === "" ? "[]" : Number(inner));
    }
  }
  return out;
}

function step(value: unknown, token: string | number): unknown {
  if (typeof token === "number") {
    if (!Array.isArray(value)) return undefined;
    return value[token < 0 ? value.length + token : token];
  }
  if (isRec(value) && own(value, token)) return value[token];
  return undefined;
}

/** The value at a path; `a|b`: the first alternative holding a value (neither absent nor null). */
export function get(value: unknown, path: string | undefined): unknown {
  if (path === undefined || path === "" || path === ".") return value;
  if (path.includes("|")) {
    // The first alternative that holds a value; null only when none does and one is null.
    let none: null | undefined;
    for (const alt of path.split("|")) {
      const found = get(value, alt.trim());
      if (found === null) none = null;
      else if (found !== undefined) return found;
    }
    return none;
  }
  let current = value;
  for (const t of tokens(path)) {
    if (t === "[]") return undefined;
    current = step(current, t);
    if (current === undefined) return undefined;
  }
  return current;
}

/** JSON text → its value; anything else (text that is not JSON) as it is. */
export function decodeText(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const t = value.trim();
  if (!(t.startsWith("{") || t.startsWith("["))) return value;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return value;
  }
}

/** A copy of `value` with the JSON text at `path` decoded (every element for `[]`); the original is not changed. */
export function decodeAt(value: unknown, path: string): unknown {
  const go = (v: unknown, ts: Array<string | number>): unknown => {
    if (!ts.length) return decodeText(v);
    const [t, ...rest] = ts;
    if (t === "[]") return Array.isArray(v) ? v.map((x) => go(x, rest)) : v;
    if (typeof t === "number") {
      if (!Array.isArray(v)) return v;
      const i = t < 0 ? v.length + t : t;
      if (i < 0 || i >= v.length) return v;
      const copy = [...v];
      copy[i] = go(v[i], rest);
      return copy;
    }
    if (!isRec(v) || !own(v, t)) return v;
    const copy: Rec = { ...v };
    copy[t] = go(v[t], rest);
    return copy;
  };
  return go(value, tokens(path));
}

const isEmpty = (v: unknown): boolean =>
  v === undefined || v === null || (typeof v === "string" && v.trim() === "") || (Array.isArray(v) && v.every((x) => isEmpty(x) || (isRec(x) && Object.keys(x).length === 0)));

/** Whether one condition holds on a value. */
export function holds(value: unknown, c: MappingCondition): boolean {
  const v = get(value, c.path);
  if (c.equals !== undefined && v !== c.equals) return false;
  if (c.in && !c.in.some((x) => x === v)) return false;
  if (c.not_in && c.not_in.some((x) => x === v)) return false;
  if (c.exists !== undefined && (v !== undefined && v !== null) !== c.exists) return false;
  if (c.empty !== undefined && isEmpty(v) !== c.empty) return false;
  if (c.contains !== undefined && !(typeof v === "string" && v.includes(c.contains))) return false;
  return true;
}

export const allHold = (value: unknown, cs: readonly MappingCondition[] | undefined) => !cs || cs.every((c) => holds(value, c));
export const anyHolds = (value: unknown, cs: readonly MappingCondition[] | undefined) => !!cs && cs.some((c) => holds(value, c));

/** A value as a key (ids, group values): text and numbers as text, anything else undefined. */
export const keyOf = (v: unknown): string | undefined => (typeof v === "string" ? v : typeof v === "number" ? String(v) : undefined);
