/**
 * Two (or more) files that belong together, joined on a key the user names: MT-Bench keeps the user
 * turns in `question.jsonl` (`{question_id, category, turns: [...]}`) and each model's answers in
 * `model_answer/<model>.jsonl` (`{question_id, answer_id, model_id, choices: [{index, turns: [...]}]}`).
 * The role of a turn comes from the file it is in: a file whose records hold their turns under
 * `choices[0].turns` (an answer file) gives assistant turns; a file with `turns` directly gives user
 * turns, except that when no file has choices the first file is the user's and the others the
 * assistant's. A conversation interleaves the turns (user 1, assistant 1, user 2, …); every other
 * field of each file's record goes to the conversation's meta (under the file's name when two files
 * share a field name).
 */
import type { ImportIssue } from "@/lib/schemas/imports";
import { isRecord } from "../issues";
import type { ParseResult } from "../parse";
import type { Normalised } from "./normalised";
import type { ConversationSource } from "./source-paths";

type Rec = Record<string, unknown>;
type Parsed = Extract<ParseResult, { ok: true }>;
export type JoinInput = { name: string; parsed: Parsed };

function recordsOf(parsed: Parsed): unknown[] {
  if (parsed.kind === "jsonl") return parsed.lines.map((l) => l.value);
  if (parsed.kind === "json") return Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  return [];
}

/** A record's turns: `choices[0].turns` (answers) or `turns`, each a string or `{content}`. */
function turnsOf(record: Rec): { turns: unknown[]; from: "choices" | "turns" } | undefined {
  const choice = Array.isArray(record.choices) && isRecord(record.choices[0]) ? record.choices[0] : undefined;
  if (choice && Array.isArray(choice.turns)) return { turns: choice.turns, from: "choices" };
  if (Array.isArray(record.turns)) return { turns: record.turns, from: "turns" };
  return undefined;
}

const textOf = (turn: unknown): unknown => (isRecord(turn) && typeof turn.content === "string" ? turn.content : turn);

/** Join the files' records on `key`; errors name the file and record that cannot be joined. */
export function joinFiles(files: JoinInput[], key: string): Normalised {
  const errors: ImportIssue[] = [];
  const perFile = files.map((file, f) => {
    const records = recordsOf(file.parsed);
    const byKey = new Map<string, Rec>();
    let fromChoices = false;
    records.forEach((r, i) => {
      const at = `(file ${f + 1} '${file.name}') [${i}]`;
      if (!isRecord(r)) return void errors.push({ path: at, message: "Record is not an object", suggestion: "Every record of a joined file must be an object" });
      const value = r[key];
      if (typeof value !== "string" && typeof value !== "number") {
        return void errors.push({ path: `${at}.${key}`, message: `Missing join key '${key}'`, suggestion: `Every record of every file needs '${key}' (a string or number), or name another key in 'join_key'` });
      }
      const turns = turnsOf(r);
      if (!turns) return void errors.push({ path: at, message: "Record has no turns", suggestion: "A joined record holds its turns under 'turns' or 'choices[0].turns'" });
      if (turns.from === "choices") fromChoices = true;
      byKey.set(String(value), r);
    });
    return { file, records, byKey, fromChoices };
  });
  const anyChoices = perFile.some((p) => p.fromChoices);
  const roles = perFile.map((p, f) => (anyChoices ? (p.fromChoices ? "assistant" : "user") : f === 0 ? "user" : "assistant"));
  if (!roles.includes("user") || !roles.includes("assistant")) {
    errors.push({
      path: "(files)",
      message: `Cannot tell whose turns each file holds: ${roles.map((r, f) => `file ${f + 1} → ${r}`).join(", ")}`,
      suggestion: "Send one file with the user turns ('turns') and one with the answers ('choices[0].turns', or 'turns' in the second file)",
    });
  }
  if (errors.length) return { format: "joined_files", data: { conversations: [] }, errors };

  const keys: string[] = [];
  const seen = new Set<string>();
  for (const p of perFile) {
    for (const k of p.byKey.keys()) {
      if (seen.has(k)) continue;
      seen.add(k);
      keys.push(k);
    }
  }
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  let unmatched = 0;
  for (const k of keys) {
    const parts = perFile.map((p, f) => ({ record: p.byKey.get(k), role: roles[f], name: p.file.name }));
    if (parts.some((p) => !p.record)) unmatched++;
    const messages: unknown[] = [];
    const longest = Math.max(...parts.map((p) => (p.record ? (turnsOf(p.record)?.turns.length ?? 0) : 0)));
    for (let t = 0; t < longest; t++) {
      for (const role of ["user", "assistant"]) {
        for (const p of parts) {
          if (p.role !== role || !p.record) continue;
          const turn = turnsOf(p.record)?.turns[t];
          if (turn !== undefined) messages.push({ role, content: textOf(turn), meta: { file: p.name, turn: t } });
        }
      }
    }
    const meta: Rec = {};
    for (const p of parts) {
      if (!p.record) continue;
      for (const [field, value] of Object.entries(p.record)) {
        if (field === "turns") continue;
        if (field === "choices") {
          // The turns are the messages; what else a choice holds (its index, …) stays.
          const rest = (p.record.choices as unknown[]).map((c) => (isRecord(c) ? Object.fromEntries(Object.entries(c).filter(([x]) => x !== "turns")) : c));
          if (rest.some((c) => isRecord(c) && Object.keys(c).length)) meta[field in meta ? `${p.name}:${field}` : field] = rest;
          continue;
        }
        if (field in meta && JSON.stringify(meta[field]) !== JSON.stringify(value)) meta[`${p.name}:${field}`] = value;
        else meta[field] = value;
      }
    }
    conversations.push({ name: `${key} ${k}`, meta, messages });
    sources.push({ path: "", messagesPath: "", rawMessages: parts.map((p) => p.record).filter(Boolean), wholeConversation: true });
  }
  const inFile = perFile.reduce((n, p) => n + p.records.length, 0);
  return {
    format: "joined_files",
    data: { conversations },
    sources,
    records: {
      inFile,
      unit: `records in ${files.length} files`,
      skipped: {},
      reasons: [
        `records joined on '${key}' into one conversation per value${unmatched ? ` (${unmatched} values are in only some of the files)` : ""}`,
        `each turn's role is its file's: ${perFile.map((p, f) => `'${p.file.name}' → ${roles[f]}`).join(", ")}`,
      ],
    },
  };
}
