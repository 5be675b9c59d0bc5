/**
 * NUL characters in an imported file's text. Raw NUL bytes are refused as binary (decode.ts), but JSON
 * may spell one as the escape \u0000 inside a string. PostgreSQL cannot store NUL in text or jsonb, so
 * on either store each one is replaced with U+FFFD (the replacement character) and the import says how
 * many: the conversation keeps every other character, and both stores hold the same text.
 */
import type { ImportIssue } from "@/lib/schemas/imports";
import type { ParseResult } from "./parse";

const REPLACEMENT = "\uFFFD";

/** Replace NUL in every string and key of the parsed file, in place; returns how many were replaced. */
export function replaceNulInParsed(parsed: ParseResult, text: string): number {
  // Only a \u0000 escape can put NUL in parsed JSON; most files have none, and are not walked.
  if (!parsed.ok || parsed.kind === "csv" || !/\\u0000/.test(text)) return 0;
  let count = 0;
  const scrub = (s: string) => {
    const parts = s.split("\u0000");
    count += parts.length - 1;
    return parts.join(REPLACEMENT);
  };
  const roots: Array<{ holder: Record<string | number, unknown>; key: string | number }> =
    parsed.kind === "json" ? [{ holder: parsed as unknown as Record<string, unknown>, key: "value" }] : parsed.lines.map((line) => ({ holder: line as unknown as Record<string, unknown>, key: "value" }));
  // An explicit stack: a deeply nested file must not overflow the call stack.
  const stack = roots;
  while (stack.length) {
    const { holder, key } = stack.pop()!;
    const v = holder[key];
    if (typeof v === "string") {
      if (v.includes("\u0000")) holder[key] = scrub(v);
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ holder: v as unknown as Record<number, unknown>, key: i });
    } else if (v !== null && typeof v === "object") {
      const obj = v as Record<string, unknown>;
      for (const k of Object.keys(obj)) {
        if (k.includes("\u0000")) {
          const renamed = scrub(k);
          obj[renamed] = obj[k];
          delete obj[k];
          stack.push({ holder: obj, key: renamed });
        } else {
          stack.push({ holder: obj, key: k });
        }
      }
    }
  }
  return count;
}

/** The warning an import carries when it replaced NUL characters. */
export function nulReplacedIssue(count: number): ImportIssue {
  return {
    path: "(file)",
    message: `${count} NUL character${count === 1 ? "" : "s"} (\\u0000) replaced with U+FFFD: NUL cannot be stored`,
    suggestion: "Remove the \\u0000 escapes from the file if the replacement character is not wanted",
  };
}
