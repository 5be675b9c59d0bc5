/**
 * A Python literal (what `repr()` of dicts, lists and strings prints: `{'id': 'call_1', 'arguments': {'code':
 * "x = 1\n"}}`, `True`, `None`) read into JSON values. Tools written in Python log their calls this way
 * (smolagents' "Calling tools:" messages). Only literals: anything else gives undefined, never an evaluation.
 */

type Value = null | boolean | number | string | Value[] | { [key: string]: Value };

const escapes: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0", a: "\x07", b: "\b", f: "\f", v: "\v" };

/** The literal at the start of `text` (after spaces), or undefined when it is not one. */
export function parsePythonLiteral(text: string): { value: Value; end: number } | undefined {
  let i = 0;
  const fail = (): never => {
    throw new Error("not a literal");
  };
  const space = () => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const str = (): string => {
    const quote = text[i];
    // Python also writes triple-quoted strings only in source, not in repr: one quote character is enough here.
    i++;
    let out = "";
    while (i < text.length && text[i] !== quote) {
      if (text[i] === "\\") {
        const next = text[i + 1];
        if (next === "x") {
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 4), 16));
          i += 4;
        } else if (next === "u") {
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else if (next === "U") {
          out += String.fromCodePoint(parseInt(text.slice(i + 2, i + 10), 16));
          i += 10;
        } else {
          out += Object.prototype.hasOwnProperty.call(escapes, next) ? escapes[next] : `\\${next}`;
          i += 2;
        }
      } else out += text[i++];
    }
    if (text[i] !== quote) fail();
    i++;
    return out;
  };
  const value = (depth: number): Value => {
    if (depth > 64) fail();
    space();
    const c = text[i];
    if (c === "'" || c === '"') return str();
    if (c === "{" || c === "[" || c === "(") {
      const close = c === "{" ? "}" : c === "[" ? "]" : ")";
      i++;
      const list: Value[] = [];
      const obj: { [key: string]: Value } = {};
      space();
      while (text[i] !== close) {
        if (i >= text.length) fail();
        const v = value(depth + 1);
        space();
        if (c === "{") {
          if (text[i] !== ":") fail();
          i++;
          Object.defineProperty(obj, String(v), { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
          space();
        } else list.push(v);
        if (text[i] === ",") {
          i++;
          space();
        } else if (text[i] !== close) fail();
      }
      i++;
      return c === "{" ? obj : list;
    }
    for (const [word, v] of [["True", true], ["False", false], ["None", null]] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    const num = /^-?\d+(\.\d+)?([eE][-+]?\d+)?/.exec(text.slice(i, i + 40));
    if (num) {
      i += num[0].length;
      return Number(num[0]);
    }
    return fail();
  };
  try {
    const v = value(0);
    return { value: v, end: i };
  } catch {
    return undefined;
  }
}
