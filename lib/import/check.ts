/**
 * The checks an upload goes through before anything is written: decode → parse → detect the format and
 * normalise → validate in stages. Pure (no database, no `server-only`): lib/import/index.ts runs it on the
 * input worker pool (lib/input-work), off the request loop, and the tests call it directly.
 */
import type { AnyImportMapping, ImportFormat, ImportIssue, ImportRecords, NotImported, SuggestedTransformation } from "@/lib/schemas/imports";
import { scoreMapping, searchMappings, type MappingScore } from "./structure/search";
import { skeletonOf } from "./structure/skeleton";
import { applyAnyMapping, asV1, isV2, unpackContainer } from "./mapping";
import { isGzip, isZipBytes } from "./mapping/container";
import { isZip, readEvalArchive } from "./formats/eval-archive";
import { convertAiderHistory, isAiderHistory } from "./formats/aider-history";
import { decodeUpload } from "./decode";
import { groupIssues } from "./group-issues";
import { isRecord } from "./issues";
import { fixUploadText } from "./fix-upload";
import { normaliseUpload } from "./formats";
import { joinFiles, type JoinInput } from "./formats/joined-files";
import { summariseRecords, type RecordsRead } from "./formats/records-summary";
import type { ConversationSource } from "./formats/source-paths";
import { toSourceIssue } from "./formats/source-paths";
import { nulReplacedIssue, replaceNulInParsed } from "./nul";
import { parseUpload } from "./parse";
import { withParsedJsonTexts } from "./formats/turns";
import { findReserialised } from "./reserialised";
import { checkRenames } from "./rename-check";
import { accountText } from "./text-accounting";
import { validateConversations, type ImportConversation, type ImportCounts } from "./validate";

export type CheckedUpload =
  | {
      ok: true;
      format: ImportFormat;
      conversations: ImportConversation[];
      counts: ImportCounts;
      warnings: ImportIssue[];
      notImported: NotImported[];
      records: ImportRecords;
      /** No adapter read the file: the structural reader's mapping, sure enough to import with in one step. */
      inferredMapping?: AnyImportMapping;
      /** `scoreMapping`: how the given mapping scored on a sample of the file. */
      mappingScore?: MappingScore;
    }
  | {
      ok: false;
      status: 400 | 413 | 415 | 422;
      errors: ImportIssue[];
      warnings: ImportIssue[];
      format?: ImportFormat;
      notImported?: NotImported[];
      /** A mapping the rules propose for a file no adapter read, checked to import it. */
      suggestedMapping?: AnyImportMapping;
      /** How that mapping scored on a sample of the file. */
      mappingScore?: MappingScore;
      feedbackInput?: { errors: ImportIssue[]; data: unknown };
      text?: string;
      /** No adapter and no proposal read the file: its bounded skeleton, for a model asked to write a mapping. */
      skeleton?: string;
    };

/** The JSON texts of an upload, for the re-serialised values (`prefix` names the file of a join). */
type JsonTexts = Array<{ text: string; lines: boolean; prefix?: string }>;

/** Several files to join on a key (the first is also `bytes`). */
export type JoinRequest = { key: string; files: Array<{ name: string; bytes: Uint8Array }> };

/** Decode and parse every file of a join; the first failure is the answer, its paths prefixed with the file. */
function parseJoined(
  join: JoinRequest,
  maxBytes: number,
): { ok: true; inputs: JoinInput[]; warnings: ImportIssue[]; texts: JsonTexts } | Extract<CheckedUpload, { ok: false }> {
  const inputs: JoinInput[] = [];
  const warnings: ImportIssue[] = [];
  const texts: JsonTexts = [];
  for (const [f, file] of join.files.entries()) {
    const prefix = (issues: ImportIssue[]) => issues.map((i) => ({ ...i, path: `(file ${f + 1} '${file.name}') ${i.path}` }));
    const decoded = decodeUpload(file.bytes, { maxBytes });
    if (!decoded.ok) return { ok: false, status: decoded.status, errors: prefix(decoded.errors), warnings: [] };
    warnings.push(...prefix(decoded.warnings));
    const parsed = parseUpload(decoded.text);
    if (!parsed.ok) return { ok: false, status: parsed.status, errors: prefix(parsed.errors), warnings };
    const nuls = replaceNulInParsed(parsed, decoded.text);
    if (nuls > 0) warnings.push(...prefix([nulReplacedIssue(nuls)]));
    inputs.push({ name: file.name, parsed });
    if (parsed.kind !== "csv") texts.push({ text: decoded.text, lines: parsed.kind === "jsonl", prefix: `(file ${f + 1} '${file.name}') ` });
  }
  return { ok: true, inputs, warnings, texts };
}

export type CheckOptions = {
  maxBytes: number;
  mapping?: AnyImportMapping;
  /** false: a file no adapter reads is never imported with the structural reader's mapping in one step (only offered). */
  inferInOneStep?: boolean;
  join?: JoinRequest;
  /** Inside a check of a rename: its suggestions are not offered, so not checked either. */
  renamesUnchecked?: boolean;
  /** With `mapping`: score it as the structural reader scores its proposals (a model's mapping is scored so). */
  scoreMapping?: boolean;
};

/** Every check an upload goes through before anything is written; pure, no database. */
export function checkUpload(bytes: Uint8Array, opts: CheckOptions): CheckedUpload {
  let warnings: ImportIssue[];
  let normalised: ReturnType<typeof normaliseUpload>;
  let parsed: Extract<ReturnType<typeof parseUpload>, { ok: true }> | undefined;
  let text: string | undefined;
  let texts: JsonTexts;
  let parsedJson: Set<string>;
  if (opts.join) {
    const joined = parseJoined(opts.join, opts.maxBytes);
    if (!joined.ok) return joined;
    warnings = joined.warnings;
    texts = joined.texts;
    const join = opts.join;
    ({ result: normalised, parsed: parsedJson } = withParsedJsonTexts(() => joinFiles(joined.inputs, join.key)));
  } else {
    // An Inspect AI .eval log is a ZIP archive: read as the JSON log it holds. Any other ZIP is refused saying so.
    let upload = bytes;
    // A version 2 mapping names the container the file is in (gzip, a ZIP of JSON files).
    const container = isV2(opts.mapping) ? opts.mapping.records?.container : undefined;
    if (container && container !== "none") {
      const unpacked = unpackContainer(bytes, container, opts.maxBytes);
      if (!unpacked.ok) return { ok: false, status: unpacked.status, errors: unpacked.errors, warnings: [] };
      upload = unpacked.bytes;
    } else if ((isGzip(bytes) || isZipBytes(bytes)) && !opts.mapping && !opts.renamesUnchecked) {
      // Compressed without a mapping: refused as before, with the mapping that reads its content when there is one.
      const refused = compressedRefusal(bytes, opts);
      if (refused) return refused;
    }
    if (upload === bytes && isZip(bytes) && bytes.length <= opts.maxBytes) {
      const archive = readEvalArchive(bytes, opts.maxBytes);
      if (!archive.ok) return { ok: false, status: archive.status, errors: archive.errors, warnings: [] };
      upload = new TextEncoder().encode(archive.text);
    }
    const decoded = decodeUpload(upload, { maxBytes: upload === bytes || container ? opts.maxBytes : Math.max(opts.maxBytes, upload.length) });
    if (!decoded.ok) return { ok: false, status: decoded.status, errors: decoded.errors, warnings: [] };
    warnings = decoded.warnings;
    text = decoded.text;
    // Aider writes Markdown, not JSON: read as what it is (no mapping applies to it).
    if (!opts.mapping && isAiderHistory(decoded.text)) {
      texts = [];
      const aider = decoded.text;
      ({ result: normalised, parsed: parsedJson } = withParsedJsonTexts(() => convertAiderHistory(aider)));
    } else {
    const read = parseUpload(decoded.text);
    if (!read.ok) return { ok: false, status: read.status, errors: read.errors, warnings, text: decoded.text };
    // NUL (a \u0000 escape) cannot be stored on PostgreSQL: replaced and counted on both stores.
    const nuls = replaceNulInParsed(read, decoded.text);
    if (nuls > 0) warnings.push(nulReplacedIssue(nuls));
    parsed = read;
    texts = read.kind === "csv" ? [] : [{ text: decoded.text, lines: read.kind === "jsonl" }];
    const mapping = opts.mapping;
    ({ result: normalised, parsed: parsedJson } = withParsedJsonTexts(() => (mapping ? applyAnyMapping(read, mapping) : normaliseUpload(read))));
    }
  }
  // Values stored in another written form than the file's (25.00 as 25): listed, as their bytes are not kept.
  const reserialised = texts.flatMap((t) => findReserialised(t.text, { ...t, parsedJson }));
  const format = normalised.format;
  const inFile = (issues: ImportIssue[]) => issues.map((issue) => toSourceIssue(issue, normalised.sources));
  const conversations = isRecord(normalised.data) && Array.isArray(normalised.data.conversations) ? normalised.data.conversations : [];
  const account = accountText(conversations, normalised.sources, asV1(opts.mapping)?.role, normalised.structural);
  if (normalised.notImported?.length || reserialised.length) {
    account.notImported = mergeNotImported([...account.notImported, ...(normalised.notImported ?? []), ...reserialised]);
  }
  const validated = validateConversations(normalised.data);
  // No adapter read the file: the structural reader's search (mappings proposed from the file's shape, scored on
  // a sample, the best checked to import the whole file).
  // Records or JSON Lines read by no dialect that did not validate are no adapter's reading: searched too (a
  // Turnscope-shaped file is not: its renames say what to fix).
  const genericFailed = format === "records" || format === "jsonl";
  const search = () => (parsed && (!format || genericFailed) && !opts.mapping && !opts.join ? searchMappings(parsed, (mapping) => checkUpload(bytes, { ...opts, mapping })) : undefined);
  // A rename is offered only once it was applied to the file and the file checked again (checkRenames).
  const renames = (issues: ImportIssue[]) =>
    opts.renamesUnchecked ? issues : checkRenames(issues, text !== undefined && !opts.mapping && !opts.join ? (t) => recheckWith(text, t, opts) : undefined);
  const failure = (errors: ImportIssue[], validationWarnings: ImportIssue[]): CheckedUpload => {
    const found = search();
    // Sure of it: imported in one step with the structural reader's mapping (the outcome names the mapping).
    if (found?.sure && found.checked.ok && opts.inferInOneStep !== false) return { ...found.checked, inferredMapping: found.mapping };
    return {
    ok: false,
    suggestedMapping: found?.checked.ok ? found.mapping : undefined,
    mappingScore: found?.checked.ok ? found.score : undefined,
    skeleton: parsed && !format && !opts.mapping && !opts.join && !found?.checked.ok ? skeletonOf(parsed) : undefined,
    status: 422,
    errors: groupIssues(renames(errors)),
    warnings: groupIssues(renames([...warnings, ...validationWarnings])),
    format,
    notImported: account.notImported,
    // The feedback rules reason about the Turnscope shape, so they get it with its own paths.
    feedbackInput: { errors: validated.ok ? errors : validated.errors, data: normalised.data },
    text,
    };
  };
  if (normalised.errors?.length || !validated.ok) {
    const validationErrors = validated.ok ? [] : inFile(validated.errors);
    return failure([...(normalised.errors ?? []), ...validationErrors, ...account.errors], inFile(validated.warnings));
  }
  // Text in the file that every message of the import would lose: refused, never stored empty.
  if (account.errors.length) return failure(account.errors, inFile(validated.warnings));
  return {
    ok: true,
    format: format ?? "turnscope",
    conversations: validated.conversations,
    counts: validated.counts,
    warnings: groupIssues([...warnings, ...inFile(validated.warnings)]),
    notImported: account.notImported,
    records: summariseRecords(normalised.records ?? recordsOfMessages(normalised.sources, validated.counts.messages), validated.counts),
    ...(opts.scoreMapping && opts.mapping && parsed ? { mappingScore: scoreMapping(parsed, opts.mapping) } : {}),
  };
}

/** Same path listed twice for the same reason (by the adapter and by the accounting): one entry, characters added. */
function mergeNotImported(items: NotImported[]): NotImported[] {
  const merged = new Map<string, NotImported>();
  for (const item of items) {
    const at = `${item.path}\u0000${item.reason ?? ""}`;
    const seen = merged.get(at);
    if (seen) seen.characters += item.characters;
    else merged.set(at, { ...item });
  }
  return [...merged.values()].sort((a, b) => b.characters - a.characters);
}

/** Message-list formats: the file's messages, and why fewer are stored (a turn is one message). */
function recordsOfMessages(sources: ConversationSource[] | undefined, stored: number): RecordsRead {
  const inFile = sources?.every((s) => s.rawMessages) ? sources.reduce((n, s) => n + (s.rawMessages?.length ?? 0), 0) : stored;
  const reasons = inFile > stored ? ["an assistant's consecutive messages and the tool replies between them are one stored message (its turn)"] : [];
  return { inFile, unit: "file messages", skipped: {}, reasons };
}

/** The fix applied as the import page applies it, and the fixed file checked again; undefined when it cannot be applied. */
function recheckWith(text: string, t: SuggestedTransformation, opts: { maxBytes: number }): CheckedUpload | undefined {
  const fixed = fixUploadText(text, t);
  if (!fixed.ok) return undefined;
  return checkUpload(new TextEncoder().encode(fixed.text), { maxBytes: Math.max(opts.maxBytes, fixed.text.length * 4), renamesUnchecked: true });
}

/** The fix applied as the import page applies it (fixUploadText), and the fixed file checked again. */
export function fixMakesValid(text: string | undefined, t: SuggestedTransformation, opts: { maxBytes: number; mapping?: AnyImportMapping }): boolean {
  if (text === undefined) return false;
  const fixed = fixUploadText(text, t);
  // The page sends the fixed file without the mapping: the fix is written against the detected shape.
  return fixed.ok && checkUpload(new TextEncoder().encode(fixed.text), { maxBytes: Math.max(opts.maxBytes, fixed.text.length * 4) }).ok;
}

/**
 * A gzip or ZIP file sent without a mapping is refused (415) as before; when its content is JSON the structural
 * reader can read, the refusal carries that mapping with the container named, checked to import the file.
 */
function compressedRefusal(bytes: Uint8Array, opts: CheckOptions): CheckedUpload | undefined {
  const container: "gzip" | "zip" = isGzip(bytes) ? "gzip" : "zip";
  const decoded = decodeUpload(bytes, { maxBytes: opts.maxBytes });
  if (decoded.ok) return undefined;
  const unpacked = unpackContainer(bytes, container, opts.maxBytes);
  if (!unpacked.ok) return undefined;
  const inner = checkUpload(unpacked.bytes, { ...opts, inferInOneStep: false });
  const mapping = inner.ok ? inner.inferredMapping : inner.suggestedMapping;
  if (!isV2(mapping)) return undefined;
  const withContainer = { ...mapping, records: { ...(mapping.records ?? {}), container } };
  if (!checkUpload(bytes, { ...opts, mapping: withContainer }).ok) return undefined;
  return { ok: false, status: decoded.status, errors: decoded.errors, warnings: [], suggestedMapping: withContainer, mappingScore: inner.ok ? undefined : inner.mappingScore };
}
