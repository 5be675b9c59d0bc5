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
export function findReserialised(text: string, opts: { lines: boolean; prefix?: string; parsedJson?: ReadonlySet<string> }): NotImported[] {
  const found = new Map<string, Found>();
  scan(text, opts.lines ? "[]" : "", found, opts.parsedJson ?? new Set());
  return [...found.values()].map((f) => ({
    path: `${opts.prefix ?? ""}${f.path}`,
    characters: f.characters,
    reason: `re-serialised: ${f.count > 1 ? `${countText(f.count)} values here, e.g. ` : ""}${f.example}`,
  }));
}
