import { isRecord } from "@/lib/vocabulary";
/**
 * Applying an import feedback's `suggested_transformation` to parsed JSON. Pure and free of Node
 * imports: the import page runs it in the browser on the file already in memory, and tests run it
 * on the server next to the validator.
 *
 * Paths: `dialogs`, `conversations[].messages[].speaker`; `[]` (or `[*]`) is every element, `[2]` one
 * element, a leading `$.` is ignored, and a key met on an array applies to each element, so a model's
 * `conversations.messages.role` works too. When `from` and `to` differ, each segment whose key differs
 * is renamed in place (same position among its siblings); `mapping` replaces string values at the end
 * of the path. The input is never mutated: changed objects and arrays are rebuilt, the rest is shared.
 */

export type Transformation = { from: string; to: string; mapping: Record<string, string> | null };

export type ApplyResult =
  | {
      ok: true;
      data: unknown;
      /** Fields renamed. */
      renamed: number;
      /** Values replaced through the mapping. */
      mapped: number;
      /** Renames skipped because the object already had the target field (it is kept as it was). */
      conflicts: number;
    }
  | { ok: false; reason: string };

type Selector = "all" | number;
/** `key` is null for a path that starts at the root array, e.g. `[].messages`. */
type Segment = { key: string | null; selectors: Selector[] };

// Writing these keys would reach the prototype chain of the rebuilt objects; no export uses them.
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);
const MAX_PATH_LENGTH = 500;

const hasOwn = (obj: object, key: string) => Object.prototype.hasOwnProperty.call(obj, key);

/** An own data property, defined rather than assigned so a `__proto__` key stays an ordinary key. */
function define(obj: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Parse a field path into segments, or say why it is not one. */
export function parseFieldPath(path: string): { ok: true; segments: Segment[] } | { ok: false; reason: string } {
  const text = path.trim().replace(/^\$\.?/, "");
  if (!text) return { ok: false, reason: "the path is empty" };
  if (text.length > MAX_PATH_LENGTH) return { ok: false, reason: "the path is too long" };
  const segments: Segment[] = [];
  let i = 0;
  while (i <= text.length) {
    let key: string | null = null;
    if (text[i] === '"') {
      // A quoted key, as the validator writes keys that are not identifiers: `."my key"`.
      const end = /^"(?:[^"\\]|\\.)*"/.exec(text.slice(i));
      if (!end) return { ok: false, reason: `unterminated quoted key in '${path}'` };
      key = JSON.parse(end[0]) as string;
      i += end[0].length;
    } else {
      const name = /^[^.[\]"]*/.exec(text.slice(i))?.[0] ?? "";
      i += name.length;
      key = name === "" ? null : name;
    }
    const selectors: Selector[] = [];
    while (text[i] === "[") {
      const sel = /^\[(\*|\d*)\]/.exec(text.slice(i));
      if (!sel) return { ok: false, reason: `'${path}' has a bracket that is not [], [*] or [number]` };
      selectors.push(sel[1] === "" || sel[1] === "*" ? "all" : Number(sel[1]));
      i += sel[0].length;
    }
    if (key === null && (segments.length > 0 || selectors.length === 0)) return { ok: false, reason: `'${path}' has an empty field name` };
    if (key !== null && FORBIDDEN_KEYS.has(key)) return { ok: false, reason: `'${key}' is not a field a transformation may touch` };
    segments.push({ key, selectors });
    if (i === text.length) break;
    if (text[i] !== ".") return { ok: false, reason: `unexpected '${text[i]}' in '${path}'` };
    i++;
    if (i === text.length) return { ok: false, reason: `'${path}' ends with a dot` };
  }
  return { ok: true, segments };
}

const sameSelectors = (a: Selector[], b: Selector[]) => a.length === b.length && a.every((s, i) => s === b[i]);

/** Copy-on-write map over an array: the same array back when nothing changed. */
function mapArray(arr: unknown[], fn: (el: unknown) => unknown): unknown[] {
  let out: unknown[] | undefined;
  arr.forEach((el, idx) => {
    const next = fn(el);
    if (next !== el) {
      out ??= arr.slice();
      out[idx] = next;
    }
  });
  return out ?? arr;
}

/** The object with `oldKey` replaced by `newKey` at the same position, holding `value`. */
function rebuild(obj: Record<string, unknown>, oldKey: string, newKey: string, value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) {
    if (k === oldKey) define(out, newKey, value);
    else define(out, k, Object.getOwnPropertyDescriptor(obj, k)?.value);
  }
  return out;
}

/** Apply a suggested transformation to parsed JSON; the input is left as it was. */
export function applyTransformation(data: unknown, t: Transformation): ApplyResult {
  const from = parseFieldPath(t.from);
  if (!from.ok) return { ok: false, reason: `Cannot read 'from': ${from.reason}` };
  const to = parseFieldPath(t.to);
  if (!to.ok) return { ok: false, reason: `Cannot read 'to': ${to.reason}` };
  const fromSegs = from.segments;
  const toSegs = to.segments;
  const sameShape =
    fromSegs.length === toSegs.length &&
    fromSegs.every((s, i) => (s.key === null) === (toSegs[i].key === null) && sameSelectors(s.selectors, toSegs[i].selectors));
  if (!sameShape) {
    return { ok: false, reason: `'${t.from}' and '${t.to}' must have the same shape: only field names may differ` };
  }

  const mapping = t.mapping ?? {};
  const counts = { renamed: 0, mapped: 0, conflicts: 0 };
  const last = fromSegs.length - 1;

  const leaf = (value: unknown): unknown => {
    if (typeof value === "string" && hasOwn(mapping, value)) {
      const target = Object.getOwnPropertyDescriptor(mapping, value)?.value;
      if (typeof target === "string" && target !== value) {
        counts.mapped++;
        return target;
      }
    }
    return value;
  };

  const select = (value: unknown, selectors: Selector[], k: number, then: (v: unknown) => unknown): unknown => {
    if (k === selectors.length) return then(value);
    if (!Array.isArray(value)) return value;
    const sel = selectors[k];
    if (sel === "all") return mapArray(value, (el) => select(el, selectors, k + 1, then));
    if (sel >= value.length) return value;
    const updated = select(value[sel], selectors, k + 1, then);
    if (updated === value[sel]) return value;
    const copy = value.slice();
    copy[sel] = updated;
    return copy;
  };

  const visit = (node: unknown, i: number): unknown => {
    const seg = fromSegs[i];
    const next = (v: unknown) => (i === last ? leaf(v) : visit(v, i + 1));
    if (seg.key === null) return select(node, seg.selectors, 0, next);
    // A key met on an array: the path left out a `[]`, so it means every element.
    if (Array.isArray(node)) return mapArray(node, (el) => visit(el, i));
    if (!isRecord(node) || !hasOwn(node, seg.key)) return node;
    const targetKey = toSegs[i].key ?? seg.key;
    const rename = targetKey !== seg.key;
    if (rename && hasOwn(node, targetKey)) {
      // Both fields present: which one is right is a question for a person, not a rewrite.
      counts.conflicts++;
      return node;
    }
    const value = Object.getOwnPropertyDescriptor(node, seg.key)?.value;
    const updated = select(value, seg.selectors, 0, next);
    if (!rename && updated === value) return node;
    if (rename) counts.renamed++;
    return rebuild(node, seg.key, targetKey, updated);
  };

  return { ok: true, data: visit(data, 0), ...counts };
}
