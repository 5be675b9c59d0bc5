/**
 * A JSON grammar checker that says exactly where and why a text is not JSON. V8's JSON.parse is used
 * for the real parse (it is fast); its messages only sometimes carry a position, so when it refuses
 * a text this scanner finds the position and a plain-words reason. It builds no values and uses an
 * explicit stack, so deep nesting cannot overflow it.
 */

export type SyntaxProblem = { position: number; detail: string; suggestion: string };

const numberPattern = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const literals = ["true", "false", "null"] as const;

type Expect = "value" | "value-or-close" | "key" | "key-or-close" | "colon" | "after-value";

function describe(ch: string): string {
  if (ch === "") return "end of file";
  if (ch === "\n") return "line break";
  if (ch === "\t") return "tab";
  const code = ch.charCodeAt(0);
  return code < 0x20 ? `control character U+${code.toString(16).padStart(4, "0")}` : `'${ch}'`;
}

function hintFor(ch: string, expected: string): string {
  if (ch === "'") return "JSON strings and property names use double quotes (\"), not single quotes";
  if (ch === "/") return "JSON does not allow comments; remove them";
  if (/[A-Za-z_]/.test(ch)) return "Put property names and text values in double quotes; literals are true, false, null";
  if (ch === "") return "The file ends too early: it may be truncated, or a bracket or quote is not closed";
  return `Expected ${expected} here`;
}

/** The first syntax problem of `text`, or null when it is valid JSON. */
export function findSyntaxError(text: string): SyntaxProblem | null {
  const stack: Array<"{" | "["> = [];
  let expect: Expect = "value";
  let i = 0;
  const n = text.length;
  const problem = (position: number, detail: string, suggestion: string): SyntaxProblem => ({ position, detail, suggestion });

  while (true) {
    while (i < n && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
    const ch = i < n ? text[i] : "";
    const top = stack[stack.length - 1];

    if (expect === "after-value") {
      if (!top) {
        if (ch === "") return null;
        return problem(i, `Unexpected ${describe(ch)} after the end of the JSON value`, "Only one JSON value may be in a .json file; for one conversation per line use JSON Lines (.jsonl)");
      }
      const close = top === "{" ? "}" : "]";
      if (ch === ",") {
        i++;
        while (i < n && /\s/.test(text[i])) i++;
        if (text[i] === close) return problem(i, `Trailing comma before '${close}'`, `Remove the comma before '${close}'`);
        expect = top === "{" ? "key" : "value";
        continue;
      }
      if (ch === close) {
        stack.pop();
        i++;
        continue;
      }
      const what = top === "{" ? "',' or '}' after a property value" : "',' or ']' after an array element";
      if (ch === "") return problem(i, `Unexpected end of file, expected ${what}`, hintFor(ch, what));
      return problem(i, `Unexpected ${describe(ch)}, expected ${what}`, ch === '"' ? "A comma is missing between two values" : hintFor(ch, what));
    }

    if (expect === "colon") {
      if (ch === ":") {
        i++;
        expect = "value";
        continue;
      }
      return problem(i, `Unexpected ${describe(ch)}, expected ':' after a property name`, hintFor(ch, "':'"));
    }

    if (expect === "key" || expect === "key-or-close") {
      if (ch === "}" && expect === "key-or-close") {
        stack.pop();
        i++;
        expect = "after-value";
        continue;
      }
      if (ch !== '"') return problem(i, `Unexpected ${describe(ch)}, expected a double-quoted property name`, hintFor(ch, "a double-quoted property name"));
      const end = scanString(text, i);
      if (typeof end !== "number") return end;
      i = end;
      expect = "colon";
      continue;
    }

    // expect is "value" or "value-or-close"
    if (ch === "]" && expect === "value-or-close") {
      stack.pop();
      i++;
      expect = "after-value";
      continue;
    }
    if (ch === "{" || ch === "[") {
      stack.push(ch);
      i++;
      expect = ch === "{" ? "key-or-close" : "value-or-close";
      continue;
    }
    if (ch === '"') {
      const end = scanString(text, i);
      if (typeof end !== "number") return end;
      i = end;
      expect = "after-value";
      continue;
    }
    numberPattern.lastIndex = i;
    if (numberPattern.test(text)) {
      i = numberPattern.lastIndex;
      expect = "after-value";
      continue;
    }
    const literal = literals.find((l) => text.startsWith(l, i));
    if (literal) {
      i += literal.length;
      expect = "after-value";
      continue;
    }
    if (ch === "" && stack.length === 0) return problem(i, "The file is empty", "Upload a JSON file with a top-level 'conversations' array");
    if (ch === "") return problem(i, "Unexpected end of file, expected a value", hintFor(ch, "a value"));
    return problem(i, `Unexpected ${describe(ch)}, expected a value`, hintFor(ch, "a value (string, number, object, array, true, false or null)"));
  }
}

/** Index just past the closing quote of the string starting at `start`, or the problem inside it. */
function scanString(text: string, start: number): number | SyntaxProblem {
  let i = start + 1;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) {
      return {
        position: i,
        detail: `Bad control character in string (${describe(text[i])})`,
        suggestion: "Escape line breaks and tabs inside strings as \\n and \\t",
      };
    }
    if (c === 0x5c) {
      const e = text[i + 1];
      if (e === "u") {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          return { position: i, detail: "Bad \\u escape in string", suggestion: "A \\u escape needs four hex digits, e.g. \\u00e9" };
        }
        i += 6;
        continue;
      }
      if (e === undefined || !'"\\/bfnrt'.includes(e)) {
        return { position: i, detail: `Bad escape '\\${e ?? ""}' in string`, suggestion: "Write a backslash as \\\\ inside strings" };
      }
      i += 2;
      continue;
    }
    i++;
  }
  return { position: text.length, detail: "Unterminated string", suggestion: "Close the string with a double quote" };
}

/** 1-based line and column of a character offset. */
export function lineColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < position; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: position - lineStart + 1 };
}

/** Offset where nesting first goes deeper than `max` levels, or -1. Strings are skipped. */
export function findExcessiveNesting(text: string, max: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return i;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return -1;
}
