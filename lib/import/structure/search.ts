/**
 * The structural reader's search (issue 49): the mappings a file's shape suggests — version 1 where it says
 * enough (./infer.ts, the rules' guess), version 2 for trees, kinds of records, array lines, transcripts, pairs,
 * span trees and bare strings (./propose.ts) — each applied to a sample of the file and scored:
 *
 * - text kept: the share of the sample's text (every string, JSON text decoded, minus values that name rather than
 *   say) found in what the mapping stores;
 * - calls paired: the share of stored tool calls with a result;
 * - turns plausible: the share of conversations whose turns are plausible (every message has text or a call, a
 *   dialogue alternates between its two speakers).
 *
 * The best that validates is checked on the whole file. It is imported in one step when the reader is sure —
 * ≥ 95% of the text, ≥ 90% of the calls paired and of the conversations plausible, on enough of the file (3
 * conversations or 8 messages) — and otherwise offered, checked, with its score.
 */
import type { AnyImportMapping } from "@/lib/schemas/imports";
import type { ParseResult } from "../parse";
import { isRecord } from "../issues";
import { proposeMapping } from "../formats/mapping";
import { applyAnyMapping } from "../mapping";
import { validateConversations } from "../validate";
import { withParsedJsonTexts } from "../formats/turns";
import { inferMapping } from "./infer";
import { proposeV2 } from "./propose";

type Parsed = Extract<ParseResult, { ok: true }>;

export type MappingScore = {
  text_kept: number;
  calls_paired: number;
  turns_plausible: number;
  conversations: number;
  messages: number;
  /** Share of the sampled text found in the messages' text and steps (not only in meta): a mapping that keeps a file's text only as meta reads no turns. */
  text_in_turns?: number;
};
/** `C`: what checking a mapping on the whole file answers (lib/import/check.ts's CheckedUpload; a type parameter, so the search does not import the check that calls it). */
export type SearchResult<C> = { mapping: AnyImportMapping; score: MappingScore; sure: boolean; checked: C };

const SAMPLE_LINES = 300;
const SAMPLE_ITEMS = 80;
const structural = new Set(["role", "from", "type", "id", "tool_call_id", "tool_use_id", "call_id", "index", "signature", "object", "timestamp", "status", "state", "_key"]);
/** A call's id under any spelling (`toolCallId`, `source_call_id`): it links a result to its call. */
const callIdKey = /(^|_)call_?id$|callid$|tool_?use_?id$/i;

/** The first records of the file: a JSON Lines head, a list's head, an object's lists' heads. */
function sampleOf(parsed: Parsed): Parsed {
  if (parsed.kind === "jsonl") return { ...parsed, lines: parsed.lines.slice(0, SAMPLE_LINES) };
  if (parsed.kind !== "json") return parsed;
  const v = parsed.value;
  if (Array.isArray(v)) return { ...parsed, value: v.slice(0, SAMPLE_ITEMS) };
  return parsed;
}

function leaves(value: unknown, out: string[], skip: ReadonlySet<string>, depth = 0): void {
  if (depth > 40 || out.length > 4000) return;
  if (typeof value === "string") {
    const t = value.trim();
    if ((t.startsWith("{") || t.startsWith("[")) && t.length > 1) {
      try {
        return leaves(JSON.parse(t), out, skip, depth + 1);
      } catch {
        // text
      }
    }
    if (t) out.push(t);
  } else if (Array.isArray(value)) for (const v of value) leaves(v, out, skip, depth + 1);
  else if (isRecord(value)) for (const [k, v] of Object.entries(value)) if (!skip.has(k) && !callIdKey.test(k)) leaves(v, out, skip, depth + 1);
}

type Validated = Extract<ReturnType<typeof validateConversations>, { ok: true }>;

function scoreOf(sample: Parsed, validated: Validated, roleKey: string | undefined): MappingScore {
  const fileValue = sample.kind === "jsonl" ? sample.lines.map((l) => l.value) : sample.kind === "json" ? sample.value : [];
  const inFile: string[] = [];
  leaves(fileValue, inFile, roleKey ? new Set([...structural, roleKey]) : structural);
  const stored: string[] = [];
  leaves(validated.conversations, stored, new Set(["role"]));
  const turns: string[] = [];
  leaves(validated.conversations.map((c) => c.messages.map((m) => [m.content, m.steps])), turns, new Set(["role"]));
  const anywhere = keptIn(stored);
  const inTurns = keptIn(turns);
  let total = 0;
  let kept = 0;
  let keptInTurns = 0;
  for (const t of inFile) {
    total += t.length;
    kept += anywhere(t);
    keptInTurns += inTurns(t);
  }
  let calls = 0;
  let paired = 0;
  let plausible = 0;
  let messages = 0;
  for (const c of validated.conversations) {
    messages += c.messages.length;
    let ok = c.messages.length > 0;
    const speakers = c.messages.filter((m) => m.role === "user" || m.role === "assistant");
    let same = 0;
    for (let i = 1; i < speakers.length; i++) if (speakers[i].role === speakers[i - 1].role) same++;
    if (speakers.length > 2 && speakers.some((m) => m.role === "user") && speakers.some((m) => m.role === "assistant") && same / (speakers.length - 1) > 0.34) ok = false;
    for (const m of c.messages) {
      if (!(m.content && m.content.trim()) && !m.steps.length) ok = false;
      const steps = m.steps;
      steps.forEach((s, i) => {
        if (!s.toolCall) return;
        calls++;
        if (steps.slice(i + 1).some((x) => x.toolResult !== null && x.toolResult !== undefined)) paired++;
      });
    }
    if (ok) plausible++;
  }
  const n = validated.conversations.length;
  return { text_kept: total ? kept / total : 1, calls_paired: calls ? paired / calls : 1, turns_plausible: n ? plausible / n : 0, conversations: n, messages, text_in_turns: total ? keptInTurns / total : 1 };
}

/** Private-use markers (ChatGPT's citations `\ue200cite\ue202turn0search0\ue201`), which a mapping may take out of the text. */
const withoutMarkers = (t: string) => t.replace(/\ue200[^\ue200\ue201]*\ue201/g, "").replace(/[\ue000-\uf8ff]/g, "");

/**
 * How many characters of a file's string the stored strings keep: all when it is stored whole (or whole once its
 * private-use markers are out); else the lines found, a speaker prefix aside (`Human: …` — a transcript split on
 * its speakers, answers cut out of a judge's prompt, results cut out of a request's text).
 */
function keptIn(stored: string[]): (t: string) => number {
  const exact = new Set(stored);
  const joined = stored.join("\u0000");
  const has = (t: string) => exact.has(t) || joined.includes(t);
  return (t) => {
    if (has(t)) return t.length;
    const clean = withoutMarkers(t);
    if (clean !== t && clean.trim() && has(clean.trim())) return t.length;
    if (!t.includes("\n")) return 0;
    let n = 0;
    for (const line of clean.split("\n").slice(0, 400)) {
      const l = line.trim().replace(/^[A-Z][A-Za-z0-9_ -]{0,30}:\s*/, "");
      if (l && has(l)) n += line.length + 1;
    }
    return Math.min(n, t.length);
  };
}

// Text counts half anywhere (meta included), half in the turns: a mapping that leaves the file's text in meta reads no turns.
const totalOf = (s: MappingScore) => s.text_kept * 0.25 + (s.text_in_turns ?? s.text_kept) * 0.25 + s.calls_paired * 0.2 + s.turns_plausible * 0.3;

/** A mapping applied to a sample and scored; undefined when the sample does not validate. */
function scoreOnSample(sample: Parsed, mapping: AnyImportMapping): MappingScore | undefined {
  let normalised;
  try {
    normalised = withParsedJsonTexts(() => applyAnyMapping(sample, mapping)).result;
  } catch {
    return undefined;
  }
  if (normalised.errors?.length) return undefined;
  const validated = validateConversations(normalised.data);
  if (!validated.ok || !validated.conversations.length) return undefined;
  const roleKey = "role" in mapping && typeof mapping.role === "string" ? mapping.role.split(".").pop() : undefined;
  return scoreOf(sample, validated, roleKey);
}

/** One mapping (the model's, a user's) scored as the search scores its proposals: on a sample of the file. */
export function scoreMapping(parsed: Parsed, mapping: AnyImportMapping): MappingScore | undefined {
  return parsed.kind === "csv" ? undefined : scoreOnSample(sampleOf(parsed), mapping);
}

/** Every proposal scored on a sample, best first (those whose sample does not validate are left out). */
export function scoreProposals(parsed: Parsed): Array<{ mapping: AnyImportMapping; score: MappingScore }> {
  const sample = sampleOf(parsed);
  const proposals: AnyImportMapping[] = [];
  const seen = new Set<string>();
  const add = (m: AnyImportMapping | undefined) => {
    if (!m) return;
    const key = JSON.stringify(m);
    if (seen.has(key)) return;
    seen.add(key);
    proposals.push(m);
  };
  add(inferMapping(parsed));
  add(proposeMapping(parsed));
  for (const m of proposeV2(parsed)) add(m);
  const scored: Array<{ mapping: AnyImportMapping; score: MappingScore; order: number }> = [];
  proposals.forEach((mapping, order) => {
    const score = scoreOnSample(sample, mapping);
    if (score) scored.push({ mapping, score, order });
  });
  // Best total first; on a tie the earlier proposal (version 1 where it says enough).
  // Totals within a hundredth are a tie (text read as a call or as its JSON text differs by a few characters).
  const rounded = (s: MappingScore) => Math.round(totalOf(s) * 100);
  scored.sort((a, b) => rounded(b.score) - rounded(a.score) || a.order - b.order);
  return scored.map(({ mapping, score }) => ({ mapping, score }));
}

/** The best proposal that imports the whole file (`check`), with whether the reader is sure of it. */
export function searchMappings<C extends { ok: boolean }>(parsed: Parsed, check: (mapping: AnyImportMapping) => C): SearchResult<C> | undefined {
  if (parsed.kind === "csv") return undefined;
  for (const { mapping, score } of scoreProposals(parsed).slice(0, 4)) {
    const checked = check(mapping);
    if (!checked.ok) continue;
    const enough = score.conversations >= 3 || score.messages >= 8;
    // Sure: the text kept, at least half of it in the turns (not only in meta), the calls paired, the turns plausible.
    const sure = score.text_kept >= 0.95 && (score.text_in_turns ?? 1) >= 0.5 && score.calls_paired >= 0.9 && score.turns_plausible >= 0.9 && enough;
    return { mapping, score, sure, checked };
  }
  return undefined;
}
