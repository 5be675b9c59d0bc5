/**
 * Values an import reads as JavaScript values and stores in another written form than the file's: a
 * number written `25.00`, `1e2`, `-0` or with more digits than a double holds (stored as `25`, `100`,
 * `0`, rounded), an integer-like key after other keys (JavaScript objects put such keys first, so the
 * key order changes), a key written twice in one object (only its last value is kept). They are listed
 * in the outcome's `not_imported` with a reason (`re-serialised: 25.00 stored as 25`) — the import
 * keeps the value, not its bytes.
 *
 * Found by one pass over the file's JSON text (no second parse), and into the JSON texts held in strings
 * that the import stored parsed (`parsedJson`: tool arguments sent as a JSON string). Whitespace and
 * string escapes are not listed: `\u00e9` and `é` are the same text (a key written twice is found when
 * written the same way both times). The pass covers the whole file, so a listed number may sit in a
 * field the import does not store at all.
 */
import type { NotImported } from "@/lib/schemas/imports";
import { countText } from "./count-text";

type Found = { path: string; characters: number; example: string; count: number };

/**
 * One scan of a JSON text. The open objects and arrays are kept by depth in arrays of small integers (no
 * object per frame or per value): where each opens (`opens`, so `[` says it is an array), where its keys
 * start in `keyStarts` (the offsets after their opening quotes, the innermost object's last), and two bits
 * per key it has (from a hash of the key's length and first and last characters, `keyBits`). Integer-like
 * keys, rare, are counted only when one comes (`intCounts`, `lastIndex`, for the object that opens at
 * `intOwner`). Keys are sliced only for what is listed: most files list nothing.
 */
class Scan {
  depth = 0;
  /** The end of the innermost object's keys in keyStarts. */
  keyTop = 0;
  opens: number[] = [];
  keyBase: number[] = [];
  keyBits: number[] = [];
  keyStarts: number[] = [];
  intOwner: number[] = [];
  intCounts: number[] = [];
  lastIndex: number[] = [];
  constructor(
    readonly text: string,
    readonly root: string,
    readonly found: Map<string, Found>,
    readonly parsedJson: ReadonlySet<string>,
    /** Whether strings may hold JSON text the import stored parsed (then each string value is looked at). */
    readonly inner: boolean,
  ) {}
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

/** The key that starts at `start` (after its opening quote), escapes decoded. */
function keyText(text: string, start: number): string {
  const raw = text.slice(start, stringEnd(text, start - 1));
  if (!raw.includes("\\")) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw; // not the file's JSON (the parse accepted it, so this does not happen)
  }
}

/** Where the value in the innermost open frame lives: arrays generalised as `[]`. */
function pathOf(s: Scan): string {
  let path = s.root;
  for (let k = 0; k < s.depth; k++) {
    if (s.text.charCodeAt(s.opens[k]) === 91) {
      path = `${path}[]`;
      continue;
    }
    const key = keyText(s.text, s.keyStarts[(k + 1 < s.depth ? s.keyBase[k + 1] : s.keyTop) - 1]);
    path = path ? `${path}.${key}` : key;
  }
  return path;
}

/** `example` is said after `re-serialised: ` (with `N values here, e.g. ` before it when there are several). */
function note(s: Scan, kind: string, characters: number, example: string) {
  const path = pathOf(s);
  const at = `${path}\u0000${kind}`;
  const seen = s.found.get(at);
  if (seen) {
    seen.count++;
    seen.characters += characters;
  } else s.found.set(at, { path, characters, example, count: 1 });
}

/** The value of an integer-like key (0 … 2^32-2, no leading zero), or -1. */
function integerKey(text: string, start: number, end: number): number {
  const length = end - start;
  if (length === 0 || length > 10 || (length > 1 && text.charCodeAt(start) === 48)) return -1;
  let value = 0;
  for (let x = start; x < end; x++) {
    const c = text.charCodeAt(x);
    if (c < 48 || c > 57) return -1;
    value = value * 10 + (c - 48);
  }
  return value < 4294967295 ? value : -1;
}

/**
 * The number that starts at `start` (a digit or `-`), listed when JavaScript writes it otherwise: a
 * fraction or exponent, a leading zero, -0 or more digits than a double holds. Returns where it ends.
 */
function numberAt(s: Scan, start: number): number {
  const text = s.text;
  const n = text.length;
  const c = text.charCodeAt(start);
  let end = start + 1;
  let plain = true;
  while (end < n) {
    const d = text.charCodeAt(end);
    if (d >= 48 && d <= 57) end++;
    else if (d === 45 || d === 43 || d === 46 || d === 101 || d === 69) {
      plain = false;
      end++;
    } else break;
  }
  const digits = c === 45 ? end - start - 1 : end - start;
  const leadingZero = text.charCodeAt(c === 45 ? start + 1 : start) === 48 && (digits > 1 || c === 45);
  if (!plain || leadingZero || digits > 15) {
    const literal = text.slice(start, end);
    const stored = JSON.stringify(Number(literal));
    if (stored !== literal) note(s, "number", literal.length, `${literal} stored as ${stored}`);
  }
  return end;
}

/** Whether the innermost object has, before its last key (at [start, end)), a key written the same way. */
function seenKey(s: Scan, start: number, end: number): boolean {
  const { text, keyStarts } = s;
  const length = end - start;
  for (let k = s.keyBase[s.depth - 1]; k < s.keyTop - 1; k++) {
    const from = keyStarts[k];
    if (stringEnd(text, from - 1) - from !== length) continue;
    let x = 0;
    while (x < length && text.charCodeAt(from + x) === text.charCodeAt(start + x)) x++;
    if (x === length) return true;
  }
  return false;
}

/**
 * The innermost object's last key, at [start, end) (its quotes at start - 1 and end), may be one it
 * already has (its bits were set in keyBits) or start with a digit: listed when it is written twice, or is
 * integer-like after other keys (JavaScript moves it first: after a key that is not integer-like, or a
 * larger one).
 */
function checkKey(s: Scan, start: number, end: number, maybeSeen: boolean) {
  const text = s.text;
  if (maybeSeen && seenKey(s, start, end)) {
    note(s, "duplicate", end - start + 2, `key "${keyText(text, start)}" written twice in one object, only its last value stored`);
  }
  const first = text.charCodeAt(start);
  const index = first >= 48 && first <= 57 ? integerKey(text, start, end) : -1;
  if (index < 0) return;
  const top = s.depth - 1;
  if (s.intOwner[top] !== s.opens[top]) {
    s.intOwner[top] = s.opens[top];
    s.intCounts[top] = 0;
    s.lastIndex[top] = -1;
  }
  // The keys before this one that are not integer-like.
  const named = s.keyTop - 1 - s.keyBase[top] - s.intCounts[top];
  if (named > 0 || index < s.lastIndex[top]) {
    note(s, "order", end - start + 2, `key "${keyText(text, start)}" stored before the keys written ahead of it (integer-like keys come first)`);
  }
  if (index > s.lastIndex[top]) s.lastIndex[top] = index;
  s.intCounts[top]++;
}

/** The string value whose quotes are at `start` and `end`: scanned as JSON text when the import stored it parsed (tool arguments). */
function scanInner(s: Scan, start: number, end: number) {
  const text = s.text;
  let k = start + 1;
  while (k < end && (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 92)) k += text.charCodeAt(k) === 92 ? 2 : 1;
  const opening = text.charCodeAt(k);
  if (opening !== 123 && opening !== 91) return;
  const raw = text.slice(start, end + 1);
  let inner: string | undefined;
  try {
    inner = raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  } catch {
    // not a string the file's parse accepted (does not happen): nothing to read
  }
  if (inner !== undefined && s.parsedJson.has(inner)) scan(inner, pathOf(s), s.found, s.parsedJson);
}

/** Characters of text read by one call of scanChunk (a string or number that starts in it is read whole). */
const CHUNK = 4096;

/**
 * The scan from `i` to about `i + CHUNK`; returns where the next chunk starts. Only `{ [ } ]`, strings and
 * numbers are looked at (a comma after a value is stepped over with it); a string is a key when a colon
 * follows it (the parse accepted the text, so that is the JSON grammar's rule). Whatever lists something,
 * or is rare, is a call out of this loop.
 *
 * Why chunks: a loop over the whole text in one call runs long in the engine's first tiers, is compiled
 * while it runs (on-stack replacement) and again for the next call, whose compiled code then meets
 * branches it had no feedback for (the first call's start ran before feedback was kept) and is thrown
 * away; a function called per chunk is compiled for all its calls, after a few have run every common branch.
 */
function scanChunk(s: Scan, i: number): number {
  const text = s.text;
  const n = text.length;
  const limit = Math.min(n, i + CHUNK);
  const { opens, keyBase, keyBits, keyStarts, inner } = s;
  let depth = s.depth;
  let keyTop = s.keyTop;
  while (i < limit) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      let end = text.indexOf('"', i + 1);
      if (end === -1 || text.charCodeAt(end - 1) === 92) end = stringEnd(text, i);
      let j = end + 1;
      let after = text.charCodeAt(j);
      if (after <= 32) while (after === 32 || after === 10 || after === 13 || after === 9) after = text.charCodeAt(++j);
      if (after !== 58 || depth === 0) {
        if (inner) {
          s.depth = depth;
          s.keyTop = keyTop;
          scanInner(s, i, end);
        }
        i = after === 44 ? j + 1 : j;
        continue;
      }
      // A key of the innermost object: compared with its keys so far only when theirs have set both its bits.
      const top = depth - 1;
      const start = i + 1;
      const first = text.charCodeAt(start);
      const hash = Math.imul((first << 16) ^ (text.charCodeAt(end - 1) << 8) ^ (end - start), 0x9e3779b1);
      const bit = (1 << (hash >>> 27)) | (1 << ((hash >>> 22) & 31));
      const bits = keyBits[top];
      keyBits[top] = bits | bit;
      keyStarts[keyTop] = start;
      keyTop++;
      if ((bits & bit) === bit || first <= 57) {
        s.depth = depth;
        s.keyTop = keyTop;
        checkKey(s, start, end, (bits & bit) === bit);
      }
      i = j + 1;
    } else if (c === 123 || c === 91) {
      opens[depth] = i;
      keyBits[depth] = 0;
      keyBase[depth] = keyTop;
      depth++;
      i++;
    } else if (c === 125 || c === 93) {
      if (depth > 0) {
        depth--;
        keyTop = keyBase[depth];
      }
      i++;
      if (i < n && text.charCodeAt(i) === 44) i++; // not read past the text's end: compiled code would be thrown away there
    } else if (c >= 48 && c <= 57) {
      // As JavaScript writes it when it is at most 15 digits without a leading zero (and nothing else).
      // Every comparison here runs for each such number (a leading zero picks the limit), so the compiled
      // code has feedback for all of them before it meets a rarer number.
      let end = i + 1;
      let d = text.charCodeAt(end);
      while (d >= 48 && d <= 57) d = text.charCodeAt(++end);
      if (d === 46 || d === 101 || d === 69 || d === 45 || d === 43 || end - i > (c === 48 ? 1 : 15)) {
        s.depth = depth;
        s.keyTop = keyTop;
        i = numberAt(s, i);
      } else i = d === 44 ? end + 1 : end;
    } else if (c === 45) {
      s.depth = depth;
      s.keyTop = keyTop;
      i = numberAt(s, i);
    } else i++;
  }
  s.depth = depth;
  s.keyTop = keyTop;
  return i;
}

function scan(text: string, root: string, found: Map<string, Found>, parsedJson: ReadonlySet<string>): void {
  const s = new Scan(text, root, found, parsedJson, parsedJson.size > 0);
  let i = 0;
  while (i < text.length) i = scanChunk(s, i);
}

/**
 * The file's values that are stored in another written form. `lines`: a JSON Lines file (each line a
 * record under `[]`); `prefix` goes before every path (a joined import names the file).
 */
export function findReserialised(text: string, opts: { lines: boolean; prefix?: string; parsedJson?: ReadonlySet<string> }): NotImported[] {
  const found = new Map<string, Found>();
  scan(text, opts.lines ? "[]" : "", found, opts.parsedJson ?? new Set());
  return [...found.values()].map((f) => ({
    path: `${opts.prefix ?? ""}${f.path}`,
    characters: f.characters,
    reason: `re-serialised: ${f.count > 1 ? `${countText(f.count)} values here, e.g. ` : ""}${f.example}`,
  }));
}
