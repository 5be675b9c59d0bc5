/**
 * The re-serialised-values scan (reserialised.ts) against the scanner it replaced (below, as it was at
 * 8311ba1: one function over the whole text, a frame object per depth, `,` and `{` deciding where keys
 * are): on random JSON texts — numbers of every shape the scan looks for, keys written twice, integer-like
 * keys in any order, escapes, whitespace, JSON Lines, and JSON text in strings the import stored parsed —
 * both list exactly the same values, paths, counts and reasons.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countText } from "./count-text";
import { findReserialised } from "./reserialised";

/** A JSON value as written: numbers and keys as their literal text, objects as entries (keys may repeat). */
type Written = { n: string } | { s: string } | { lit: string } | { arr: Written[] } | { obj: Array<[string, Written]> } | { json: Written; pad: string };

const numbers = fc.oneof(
  fc.constantFrom("0", "-0", "1", "25", "-7", "25.00", "1.0", "0.5", "-0.0", "1.5", "-1.5e-7", "1e2", "1E+2", "2e-3", "0e0", "100", "12345678901234567890", "123456789012345", "1234567890123456", "-1234567890123456", "9007199254740993", "0.1", "3.14159"),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
);
/** Key texts as written between the quotes: repeats, integer-like ones, escapes. */
const keys = fc.constantFrom("a", "b", "ab", "ba", "name", "meta", "role", "0", "1", "2", "10", "01", "-1", "1.5", "4294967294", "4294967295", "a\\\"b", "\\u0061", "a\\\\", "é", "", "A", "$x", "_id");
const strings = fc.constantFrom("", "x", "25.00", "-0", "a\\\"b", "\\\\", "{\\\"k\\\": 1.0}", "\\\":", "}", "]", "[1e2]", "caf\\u00e9", " {}");
const literals = fc.constantFrom("true", "false", "null");

const written: fc.Arbitrary<Written> = fc.letrec<{ value: Written }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    numbers.map((n) => ({ n })),
    strings.map((s) => ({ s })),
    literals.map((lit) => ({ lit })),
    fc.array(tie("value"), { maxLength: 4 }).map((arr) => ({ arr })),
    fc.array(fc.tuple(keys, tie("value")), { maxLength: 5 }).map((obj) => ({ obj })),
    fc.record({ json: tie("value"), pad: fc.constantFrom("", " ", "  ") }),
  ),
})).value;

/** Whitespace around the punctuation, one choice per text. */
const spacing = fc.record({ afterColon: fc.constantFrom("", " "), beforeColon: fc.constantFrom("", " ", "\n"), afterComma: fc.constantFrom("", " ", "\n  ", "\t"), inside: fc.constantFrom("", " ", "\r\n") });
type Spacing = { afterColon: string; beforeColon: string; afterComma: string; inside: string };

/** The value's JSON text; strings that hold JSON text are collected in `inner` with whether the import parsed them. */
function write(v: Written, sp: Spacing, inner: string[]): string {
  if ("n" in v) return v.n;
  if ("s" in v) return `"${v.s}"`;
  if ("lit" in v) return v.lit;
  if ("arr" in v) return `[${sp.inside}${v.arr.map((x) => write(x, sp, inner)).join(`,${sp.afterComma}`)}${sp.inside}]`;
  if ("obj" in v) return `{${sp.inside}${v.obj.map(([k, x]) => `"${k}"${sp.beforeColon}:${sp.afterColon}${write(x, sp, inner)}`).join(`,${sp.afterComma}`)}${sp.inside}}`;
  const text = v.pad + write(v.json, sp, inner);
  inner.push(text);
  return JSON.stringify(text);
}

describe("findReserialised finds what the scanner it replaced found", () => {
  it("on random JSON documents and JSON Lines, with and without JSON text stored parsed", () => {
    fc.assert(
      fc.property(
        fc.array(written, { minLength: 1, maxLength: 3 }),
        spacing,
        fc.boolean(),
        fc.array(fc.boolean(), { maxLength: 12 }),
        fc.constantFrom("", "(file 1 'a.json') "),
        (records, sp, lines, parsedFlags, prefix) => {
          const inner: string[] = [];
          const texts = records.map((r) => write(r, sp, inner));
          const text = lines ? texts.join("\n") + "\n" : texts[0];
          if (lines) for (const t of texts) JSON.parse(t);
          else JSON.parse(text);
          const parsedJson = new Set(inner.filter((_, k) => parsedFlags[k]));
          const opts = { lines, parsedJson, prefix };
          expect(findReserialised(text, opts)).toEqual(referenceFindReserialised(text, opts));
        },
      ),
      { numRuns: 400 },
    );
  });

  it("on objects with many keys, some written twice or integer-like (the key bits collide)", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom("k", "key", "x1", "1", "2", "3", "10", "a", "b", "c", "d", "e", "f", "g", "h"), fc.nat(9)), { maxLength: 60 }), (entries) => {
        const text = `{"o": {${entries.map(([k, n]) => `"${k}${n % 3 === 0 ? "" : n}": ${n}`).join(", ")}}}`;
        JSON.parse(text);
        expect(findReserialised(text, { lines: false })).toEqual(referenceFindReserialised(text, { lines: false }));
      }),
      { numRuns: 200 },
    );
  });
});

// The scanner as it was (8311ba1), the reference.

/**
 * An open object or array, reused by depth (no allocation per object). Keys are kept as offsets into the
 * text (`keyStarts`/`keyEnds`, the current one last), sliced only for what is listed: most files list nothing.
 */
type Frame = { array: boolean; keyCount: number; keyStarts: number[]; keyEnds: number[]; named: boolean; lastIndex: number };
type Found = { path: string; characters: number; example: string; count: number };

/** The key a frame's current value sits under (escapes decoded). */
function keyOf(text: string, frame: Frame): string {
  const raw = text.slice(frame.keyStarts[frame.keyCount - 1], frame.keyEnds[frame.keyCount - 1]);
  if (!raw.includes("\\")) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw; // not the file's JSON (the parse accepted it, so this does not happen)
  }
}

/** Where the value in the innermost open frame lives: arrays generalised as `[]`. */
function pathOf(text: string, stack: Frame[], depth: number, root: string): string {
  let path = root;
  for (let k = 0; k < depth; k++) {
    const frame = stack[k];
    path = frame.array ? `${path}[]` : path ? `${path}.${keyOf(text, frame)}` : keyOf(text, frame);
  }
  return path;
}

/** `example` is said after `re-serialised: ` (with `N values here, e.g. ` before it when there are several). */
function note(found: Map<string, Found>, path: string, kind: string, characters: number, example: string) {
  const at = `${path}\u0000${kind}`;
  const seen = found.get(at);
  if (seen) {
    seen.count++;
    seen.characters += characters;
  } else found.set(at, { path, characters, example, count: 1 });
}

/** Index of the quote closing the string that opens at `start`. */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  while (end !== -1) {
    let slashes = 0;
    for (let k = end - 1; text.charCodeAt(k) === 92; k--) slashes++;
    if (slashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
  return text.length;
}

const isDigit = (c: number) => c >= 48 && c <= 57;
/** A character a JSON number can hold: digits, `-`, `+`, `.`, `e`, `E`. */
const inNumber = (c: number) => isDigit(c) || c === 45 || c === 43 || c === 46 || c === 101 || c === 69;

/** Whether the frame already has the key at [start, end) (written the same way). */
function seenKey(text: string, frame: Frame, start: number, end: number): boolean {
  const length = end - start;
  for (let k = 0; k < frame.keyCount - 1; k++) {
    const s = frame.keyStarts[k];
    if (frame.keyEnds[k] - s !== length) continue;
    let same = true;
    for (let x = 0; x < length && same; x++) same = text.charCodeAt(s + x) === text.charCodeAt(start + x);
    if (same) return true;
  }
  return false;
}

/** The value of an integer-like key (0 … 2^32-2, no leading zero), or -1. */
function integerKey(text: string, start: number, end: number): number {
  const length = end - start;
  if (length === 0 || length > 10 || (length > 1 && text.charCodeAt(start) === 48)) return -1;
  let value = 0;
  for (let x = start; x < end; x++) {
    const c = text.charCodeAt(x);
    if (!isDigit(c)) return -1;
    value = value * 10 + (c - 48);
  }
  return value < 4294967295 ? value : -1;
}

function scan(text: string, root: string, found: Map<string, Found>, parsedJson: ReadonlySet<string>): void {
  const stack: Frame[] = [];
  let depth = 0;
  let expectKey = false;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    // { [ } ] , " and numbers; whitespace, colons and literals pass
    if (c === 123 || c === 91) {
      const frame = stack[depth] ?? (stack[depth] = { array: false, keyCount: 0, keyStarts: [], keyEnds: [], named: false, lastIndex: -1 });
      frame.array = c === 91;
      frame.keyCount = 0;
      frame.named = false;
      frame.lastIndex = -1;
      depth++;
      expectKey = c === 123;
      i++;
    } else if (c === 125 || c === 93) {
      if (depth > 0) depth--;
      expectKey = false;
      i++;
    } else if (c === 44) {
      expectKey = depth > 0 && !stack[depth - 1].array;
      i++;
    } else if (c === 34) {
      const end = stringEnd(text, i);
      const top = depth > 0 ? stack[depth - 1] : undefined;
      if (expectKey && top && !top.array) {
        const start = i + 1;
        top.keyStarts[top.keyCount] = start;
        top.keyEnds[top.keyCount] = end;
        top.keyCount++;
        if (top.keyCount > 1 && seenKey(text, top, start, end)) {
          const key = keyOf(text, top);
          note(found, pathOf(text, stack, depth, root), "duplicate", end - i + 1, `key "${key}" written twice in one object, only its last value stored`);
        }
        const index = isDigit(text.charCodeAt(start)) ? integerKey(text, start, end) : -1;
        if (index >= 0) {
          if (top.named || index < top.lastIndex) {
            const key = keyOf(text, top);
            note(found, pathOf(text, stack, depth, root), "order", end - i + 1, `key "${key}" stored before the keys written ahead of it (integer-like keys come first)`);
          }
          if (index > top.lastIndex) top.lastIndex = index;
        } else top.named = true;
        expectKey = false;
      } else if (parsedJson.size) {
        // JSON text in a string that the import stored parsed (tool arguments): its values are re-serialised too.
        let k = i + 1;
        while (k < end && (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 92)) k += text.charCodeAt(k) === 92 ? 2 : 1;
        const opening = text.charCodeAt(k);
        if (opening === 123 || opening === 91) {
          const raw = text.slice(i, end + 1);
          let inner: string | undefined;
          try {
            inner = raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
          } catch {
            // not a string the file's parse accepted (does not happen): nothing to read
          }
          if (inner !== undefined && parsedJson.has(inner)) scan(inner, pathOf(text, stack, depth, root), found, parsedJson);
        }
      }
      i = end + 1;
    } else if (c === 45 || isDigit(c)) {
      let end = i + 1;
      // Canonical as written unless it has a fraction or exponent, a leading zero, is -0 or too long for a double.
      let plain = true;
      while (end < n) {
        const d = text.charCodeAt(end);
        if (!inNumber(d)) break;
        if (!isDigit(d)) plain = false;
        end++;
      }
      const digits = c === 45 ? end - i - 1 : end - i;
      const leadingZero = text.charCodeAt(c === 45 ? i + 1 : i) === 48 && (digits > 1 || c === 45);
      if (!plain || leadingZero || digits > 15) {
        const literal = text.slice(i, end);
        const stored = JSON.stringify(Number(literal));
        if (stored !== literal) note(found, pathOf(text, stack, depth, root), "number", literal.length, `${literal} stored as ${stored}`);
      }
      i = end;
    } else i++;
  }
}

/**
 * The file's values that are stored in another written form. `lines`: a JSON Lines file (each line a
 * record under `[]`); `prefix` goes before every path (a joined import names the file).
 */
function referenceFindReserialised(text: string, opts: { lines: boolean; prefix?: string; parsedJson?: ReadonlySet<string> }): Array<{ path: string; characters: number; reason: string }> {
  const found = new Map<string, Found>();
  scan(text, opts.lines ? "[]" : "", found, opts.parsedJson ?? new Set());
  return [...found.values()].map((f) => ({
    path: `${opts.prefix ?? ""}${f.path}`,
    characters: f.characters,
    reason: `re-serialised: ${f.count > 1 ? `${countText(f.count)} values here, e.g. ` : ""}${f.example}`,
  }));
}
