/**
 * Inspect AI `.eval` logs: a ZIP archive of `header.json` (the eval, its plan and results; `_journal/start.json`
 * while the run is still going), one `samples/<id>_epoch_<n>.json` per sample and epoch, and `summaries.json` /
 * `reductions.json`. Read with fflate (no hand-written unzip) into the JSON log the eval-log adapter reads:
 * `{...header, samples: [...]}`, each sample's `attachment://<hash>` references replaced by the text its
 * `attachments` hold. Only those members are inflated, and only while the bytes they actually inflate to
 * (in total, whatever their headers declare) stay under the import's size limit (lib/import/formats/zip-members.ts),
 * so an archive cannot expand into more than an ordinary upload may be. */
import type { ImportIssue } from "@/lib/schemas/imports";
import { formatBytes, isRecord } from "../issues";
import { readZipMembers } from "./zip-members";

export type ArchiveRead = { ok: true; text: string } | { ok: false; status: 413 | 415 | 422; errors: ImportIssue[] };

const ZIP = [0x50, 0x4b, 0x03, 0x04];

/** True when the upload is a ZIP archive (its first bytes). */
export function isZip(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && ZIP.every((b, i) => bytes[i] === b);
}

const wanted = (name: string) => name === "header.json" || name === "_journal/start.json" || (name.startsWith("samples/") && name.endsWith(".json"));

/** `attachment://<hash>` strings anywhere in a value, replaced by the attachment's text. */
function resolve(value: unknown, attachments: Record<string, unknown>, depth = 0): unknown {
  if (depth > 200) return value;
  if (typeof value === "string") {
    if (!value.startsWith("attachment://")) return value;
    const key = value.slice("attachment://".length);
    return Object.prototype.hasOwnProperty.call(attachments, key) ? attachments[key] : value;
  }
  if (Array.isArray(value)) return value.map((v) => resolve(v, attachments, depth + 1));
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: resolve(v, attachments, depth + 1), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}

/** The archive as the JSON text of one eval log, or why it cannot be read. */
export function readEvalArchive(bytes: Uint8Array, maxBytes: number): ArchiveRead {
  const fail = (status: 413 | 415 | 422, message: string, suggestion: string): ArchiveRead => ({ ok: false, status, errors: [{ path: "(file)", message, suggestion }] });
  const read = readZipMembers(bytes, wanted, maxBytes);
  if (!read.ok && read.reason === "unreadable") {
    return fail(415, "Unsupported file: a ZIP archive that cannot be read (damaged or encrypted)", "Upload an Inspect AI .eval log as written, or the conversations as a JSON file");
  }
  if (!read.ok) {
    return fail(
      413,
      `File too large: the archive expands to more than ${formatBytes(maxBytes)} (MAX_IMPORT_BYTES), counting the bytes its members actually inflate to`,
      `Split the log into files under ${formatBytes(maxBytes)} (inspect log convert --to json) and import them one after another`,
    );
  }
  const files = Object.fromEntries(read.members);
  const headerBytes = files["header.json"] ?? files["_journal/start.json"];
  const sampleNames = Object.keys(files).filter((n) => n.startsWith("samples/")).sort();
  if (!headerBytes && !sampleNames.length) {
    return fail(415, "Unsupported file: a ZIP archive that is not an Inspect AI .eval log (no header.json, no samples/)", "Extract the JSON file from the archive and upload it");
  }
  const decoder = new TextDecoder("utf-8", { fatal: true });
  try {
    const header = headerBytes ? (JSON.parse(decoder.decode(headerBytes)) as unknown) : {};
    const samples = sampleNames.map((name) => {
      const sample = JSON.parse(decoder.decode(files[name])) as unknown;
      if (!isRecord(sample)) return sample;
      const attachments = isRecord(sample.attachments) ? sample.attachments : {};
      const { attachments: _attachments, ...rest } = sample;
      return resolve(rest, attachments);
    });
    const log = { ...(isRecord(header) ? header : {}), samples };
    return { ok: true, text: JSON.stringify(log) };
  } catch {
    return fail(422, "Invalid .eval log: a member of the archive is not UTF-8 JSON", "Check the log with `inspect log dump`, or convert it with `inspect log convert --to json`");
  }
}
