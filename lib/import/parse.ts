/**
 * Stage 2 of an import: syntax. One JSON document, or JSON Lines (one value per line) when the
 * whole text is not JSON but its lines are, or CSV when the first line is a header naming `role` and
 * a text column. Errors carry the line and column of the problem.
 */
import type { ImportIssue } from "@/lib/schemas/imports";
import { looksLikeCsv, parseCsv, type CsvTable } from "./formats/csv";
import { IssueList } from "./issues";
import { findExcessiveNesting, findSyntaxError, lineColumn } from "./json-syntax";

/** Deeper than any real export; keeps JSON.stringify and the validators far from stack limits. */
export const MAX_NESTING = 128;

export type ParseResult =
  | { ok: true; kind: "json"; value: unknown }
  | { ok: true; kind: "jsonl"; lines: Array<{ line: number; value: unknown }> }
  | { ok: true; kind: "csv"; table: CsvTable }
  | { ok: false; status: 400 | 422; errors: ImportIssue[] };

function syntaxIssue(text: string, lineOffset = 0): ImportIssue {
  const problem = findSyntaxError(text) ?? {
    position: 0,
    detail: "the JSON parser refused the text",
    suggestion: "Check the file with a JSON validator",
  };
  const { line, column } = lineColumn(text, problem.position);
  const at = line + lineOffset;
  return {
    path: lineOffset ? `(line ${at})` : "(file)",
    message: `Invalid JSON: ${problem.detail} at line ${at}, column ${column}`,
    suggestion: problem.suggestion,
    line: at,
    column,
  };
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** Parse the decoded text as JSON, or as JSON Lines when that is what it is. */
export function parseUpload(text: string): ParseResult {
  const deep = findExcessiveNesting(text, MAX_NESTING);
  if (deep !== -1) {
    const { line, column } = lineColumn(text, deep);
    return {
      ok: false,
      status: 422,
      errors: [
        {
          path: "(file)",
          message: `Nesting too deep: more than ${MAX_NESTING} levels of objects and arrays at line ${line}, column ${column}`,
          suggestion: `Flatten the data: conversations, messages, steps and their values must fit within ${MAX_NESTING} levels`,
          line,
          column,
        },
      ],
    };
  }

  const whole = tryParse(text);
  if (whole.ok) return { ok: true, kind: "json", value: whole.value };

  const lines = text.split("\n");
  const filled = lines.map((l, i) => ({ line: i + 1, text: l.trim() })).filter((l) => l.text !== "");
  const first = filled[0];
  // JSON Lines of objects, or of arrays (event streams whose lines are `[kind, payload, …]`: the first two lines arrays).
  const arrayLines = () => first.text.startsWith("[") && filled[1].text.startsWith("[") && tryParse(first.text).ok && tryParse(filled[1].text).ok;
  const looksLikeJsonLines = filled.length >= 2 && ((first.text.startsWith("{") && tryParse(first.text).ok) || arrayLines());
  if (!looksLikeJsonLines && looksLikeCsv(text)) {
    const csv = parseCsv(text);
    return csv.ok ? { ok: true, kind: "csv", table: csv.table } : { ok: false, status: 400, errors: [csv.issue] };
  }
  if (!looksLikeJsonLines) return { ok: false, status: 400, errors: [syntaxIssue(text)] };

  const errors = new IssueList();
  const values: Array<{ line: number; value: unknown }> = [];
  for (const l of filled) {
    const parsed = tryParse(l.text);
    if (parsed.ok) values.push({ line: l.line, value: parsed.value });
    else errors.add(syntaxIssue(lines[l.line - 1], l.line - 1));
  }
  if (errors.count) return { ok: false, status: 400, errors: errors.toArray("errors") };
  return { ok: true, kind: "jsonl", lines: values };
}
