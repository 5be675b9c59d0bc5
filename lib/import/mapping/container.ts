/**
 * Containers a version 2 mapping names (`records.container`): gzip, or a ZIP archive whose `.json` / `.jsonl`
 * members are read in name order as one file (JSON Lines members joined line by line; JSON members as the
 * elements of one list). Inflated with fflate (pure, also in the browser), never past `maxBytes`.
 */
import { gunzipWithin, readZipMembers } from "../formats/zip-members";
import type { ImportIssue } from "@/lib/schemas/imports";

export type Unpacked = { ok: true; bytes: Uint8Array } | { ok: false; status: 413 | 415; errors: ImportIssue[] };

export const isGzip = (bytes: Uint8Array) => bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
export const isZipBytes = (bytes: Uint8Array) => bytes.length > 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;

const fail = (status: 413 | 415, message: string, suggestion: string): Unpacked => ({ ok: false, status, errors: [{ path: "(file)", message, suggestion }] });

/** The file inside the container; the bytes as they are when they are not that container. */
export function unpackContainer(bytes: Uint8Array, container: "none" | "gzip" | "zip" | undefined, maxBytes: number): Unpacked {
  if (!container || container === "none") return { ok: true, bytes };
  if (container === "gzip") {
    if (!isGzip(bytes)) return fail(415, "The mapping says the file is gzip-compressed, but it is not", "Remove 'records.container' from the mapping, or upload the .gz file");
    // Counted as it inflates (gunzipSync inflated all of it first: a small gzip can hold gigabytes).
    const out = gunzipWithin(bytes, maxBytes);
    if (!out.ok && out.reason === "unreadable") return fail(415, "Unsupported file: gzip data that cannot be read (damaged)", "Upload the file as it was written, or decompress it first");
    if (!out.ok) return fail(413, `File too large once decompressed: over ${maxBytes} bytes (MAX_IMPORT_BYTES)`, "Split the file and import the parts");
    return { ok: true, bytes: out.bytes };
  }
  if (!isZipBytes(bytes)) return fail(415, "The mapping says the file is a ZIP archive, but it is not", "Remove 'records.container' from the mapping, or upload the .zip file");
  // Bounded by the bytes the members actually inflate to, not the sizes they declare (issue 48.8).
  const read = readZipMembers(bytes, (name) => /\.(json|jsonl)$/i.test(name) && !name.startsWith("__MACOSX/"), maxBytes);
  if (!read.ok && read.reason === "unreadable") return fail(415, "Unsupported file: a ZIP archive that cannot be read (damaged or encrypted)", "Extract the JSON files and upload them");
  if (!read.ok) return fail(413, `File too large once extracted: over ${maxBytes} bytes (MAX_IMPORT_BYTES)`, "Split the archive and import the parts");
  const members = Object.fromEntries(read.members);
  const names = Object.keys(members).sort();
  if (!names.length) return fail(415, "The ZIP archive holds no .json or .jsonl file", "Put the conversations in the archive as .json or .jsonl files");
  const decoder = new TextDecoder();
  const texts = names.map((n) => decoder.decode(members[n]).replace(/^\uFEFF/, ""));
  const allLines = names.every((n) => /\.jsonl$/i.test(n));
  const text = names.length === 1 ? texts[0] : allLines ? texts.map((t) => t.trimEnd()).join("\n") : `[${texts.join(",\n")}]`;
  return { ok: true, bytes: new TextEncoder().encode(text) };
}
