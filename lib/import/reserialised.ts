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
 * string escapes are not listed:
 * `\u00e9` and `é` are the same text. The pass covers the whole file, so a listed number may sit in a
 * field the import does not store at all.
 */
import type { NotImported } from "@/lib/schemas/imports";

type Frame = { array: boolean; path: string; key: string; keys: Set<string> | null; named: boolean; lastIndex: number };
type Found = { path: string; characters: number; example: string; count: number };

const integerKey = /^(?:0|[1-9]\d{0,9})$/;
const numberChar = /[-+0-9.eE]/;

/** Where the value at the top of the stack lives: arrays generalised as `[]`. */
function valuePath(stack: Frame[], root: string): string {
  const top = stack[stack.length - 1];
  if (!top) return root;
  if (top.array) return `${top.path}[]`;
  return top.path ? `${top.path}.${top.key}` : top.key;
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

function scan(text: string, root: string, found: Map<string, Found>, parsedJson: ReadonlySet<string>): void {
  const stack: Frame[] = [];
  let expectKey = false;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    // { [ } ] " , and the rest
    if (c === 123 || c === 91) {
      stack.push({ array: c === 91, path: valuePath(stack, root), key: "", keys: null, named: false, lastIndex: -1 });
      expectKey = c === 123;
      i++;
    } else if (c === 125 || c === 93) {
      stack.pop();
      expectKey = false;
      i++;
    } else if (c === 44) {
      const top = stack[stack.length - 1];
      expectKey = !!top && !top.array;
      i++;
    } else if (c === 34) {
      const end = stringEnd(text, i);
      const raw = text.slice(i, end + 1);
      const top = stack[stack.length - 1];
      const hasEscape = raw.includes("\\");
      if (expectKey && top && !top.array) {
        let key = raw.slice(1, -1);
        if (hasEscape) {
          try {
            key = JSON.parse(raw) as string;
          } catch {
            // not the file's JSON (the parse accepted it, so this does not happen): keep the raw key
          }
        }
        const path = top.path ? `${top.path}.${key}` : key;
        if (top.keys?.has(key)) note(found, path, "duplicate", raw.length, `key "${key}" written twice in one object, only its last value stored`);
        (top.keys ??= new Set()).add(key);
        if (integerKey.test(key) && Number(key) < 4294967295) {
          const index = Number(key);
          if (top.named || index < top.lastIndex) note(found, path, "order", raw.length, `key "${key}" stored before the keys written ahead of it (integer-like keys come first)`);
          top.lastIndex = Math.max(top.lastIndex, index);
        } else top.named = true;
        top.key = key;
        expectKey = false;
      } else if (parsedJson.size) {
        // JSON text in a string that the import stored parsed (tool arguments): its values are re-serialised too.
        let k = 1;
        while (k < raw.length && (raw[k] === " " || raw[k] === "\\")) k += raw[k] === "\\" ? 2 : 1;
        if (raw[k] === "{" || raw[k] === "[") {
          let inner: string | undefined;
          try {
            inner = hasEscape ? (JSON.parse(raw) as string) : raw.slice(1, -1);
          } catch {
            // not a string the file's parse accepted (does not happen): nothing to read
          }
          if (inner !== undefined && parsedJson.has(inner)) scan(inner, valuePath(stack, root), found, parsedJson);
        }
      }
      i = end + 1;
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      let end = i + 1;
      while (end < n && numberChar.test(text[end])) end++;
      const literal = text.slice(i, end);
      const stored = JSON.stringify(Number(literal));
      if (stored !== literal) note(found, valuePath(stack, root), "number", literal.length, `${literal} stored as ${stored}`);
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
    reason: `re-serialised: ${f.count > 1 ? `${f.count.toLocaleString("en-US")} values here, e.g. ` : ""}${f.example}`,
  }));
}
