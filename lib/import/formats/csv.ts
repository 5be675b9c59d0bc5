/**
 * CSV with one row per message — how spreadsheets and warehouse exports look: a header row naming
 * `conversation_id`, `role` and `content` (also `text`/`message`), rows in order. Rows with the same
 * `conversation_id` form one conversation, in order of first appearance; any other column goes to
 * meta: the conversation's when it holds one value across the conversation, else each message's.
 */
import type { ImportIssue } from "@/lib/schemas/imports";

export type CsvTable = { header: string[]; rows: Array<{ line: number; cells: string[] }> };

const contentColumns = ["content", "text", "message", "body"];
const conversationColumns = ["conversation_id", "conversation", "thread_id", "session_id", "dialog_id"];

/** RFC 4180: quoted fields may hold commas, quotes (doubled) and newlines; CRLF or LF line ends. */
export function parseCsv(text: string): { ok: true; table: CsvTable } | { ok: false; issue: ImportIssue } {
  const records: Array<{ line: number; cells: string[] }> = [];
  let cells: string[] = [];
  let field = "";
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  let i = 0;
  const endRecord = () => {
    cells.push(field);
    if (!(cells.length === 1 && cells[0] === "")) records.push({ line: recordLine, cells });
    cells = [];
    field = "";
  };
  while (i < text.length) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else {
        if (ch === "\n") line++;
        field += ch;
      }
      i++;
      continue;
    }
    if (ch === '"' && field === "") quoted = true;
    else if (ch === ",") {
      cells.push(field);
      field = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      endRecord();
      line++;
      recordLine = line;
    } else field += ch;
    i++;
  }
  if (quoted) {
    return {
      ok: false,
      issue: { path: `(line ${recordLine})`, line: recordLine, message: `Invalid CSV: a quoted field opened at line ${recordLine} is never closed`, suggestion: 'Close the field with a double quote; a quote inside a field is written twice ("")' },
    };
  }
  if (field !== "" || cells.length) endRecord();
  const [head, ...rows] = records;
  return { ok: true, table: { header: head ? head.cells.map((h) => h.trim()) : [], rows } };
}

/** True when the first line is a CSV header naming a role column and a text column. */
export function looksLikeCsv(text: string): boolean {
  const first = text.slice(0, text.search(/\r?\n|$/)).toLowerCase();
  if (!first.includes(",") || first.trimStart().startsWith("{") || first.trimStart().startsWith("[")) return false;
  const names = first.split(",").map((h) => h.trim().replace(/^"|"$/g, ""));
  return names.includes("role") && names.some((n) => contentColumns.includes(n));
}

export type CsvConversion = {
  data: { conversations: unknown[] };
  /** Conversation i → the file lines of its messages, for issue locations. */
  lines: number[][];
  errors: ImportIssue[];
};

/** Rows → Turnscope conversations. */
export function convertCsv(table: CsvTable): CsvConversion {
  const lower = table.header.map((h) => h.toLowerCase());
  const roleAt = lower.indexOf("role");
  const contentAt = lower.findIndex((h) => contentColumns.includes(h));
  const convAt = lower.findIndex((h) => conversationColumns.includes(h));
  const extra = table.header.map((h, i) => ({ name: h, i })).filter(({ i }) => i !== roleAt && i !== contentAt && i !== convAt && table.header[i] !== "");
  const errors: ImportIssue[] = [];
  const groups = new Map<string, Array<{ line: number; cells: string[] }>>();
  for (const row of table.rows) {
    if (row.cells.length !== table.header.length) {
      errors.push({
        path: `(line ${row.line})`,
        line: row.line,
        message: `Row has ${row.cells.length} fields, the header has ${table.header.length}`,
        suggestion: "Quote fields that contain commas or line breaks, and give every row one value per column",
      });
      continue;
    }
    const id = convAt === -1 ? "1" : row.cells[convAt];
    const list = groups.get(id) ?? [];
    list.push(row);
    groups.set(id, list);
  }
  const conversations: unknown[] = [];
  const lines: number[][] = [];
  for (const [id, rows] of groups) {
    const shared = extra.filter(({ i }) => rows.every((r) => r.cells[i] === rows[0].cells[i]));
    const perMessage = extra.filter((e) => !shared.includes(e));
    const meta: Record<string, unknown> = {};
    for (const { name, i } of shared) if (rows[0].cells[i] !== "") Object.defineProperty(meta, name, { value: rows[0].cells[i], enumerable: true, writable: true, configurable: true });
    conversations.push({
      name: convAt === -1 ? null : id,
      meta: Object.keys(meta).length ? meta : null,
      messages: rows.map((r) => {
        const messageMeta: Record<string, unknown> = {};
        for (const { name, i } of perMessage) if (r.cells[i] !== "") Object.defineProperty(messageMeta, name, { value: r.cells[i], enumerable: true, writable: true, configurable: true });
        return { role: r.cells[roleAt].trim(), content: r.cells[contentAt], meta: Object.keys(messageMeta).length ? messageMeta : null };
      }),
    });
    lines.push(rows.map((r) => r.line));
  }
  return { data: { conversations }, lines, errors };
}
