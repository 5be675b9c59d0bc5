/**
 * Stage 1 of an import: size and encoding. Bytes in, UTF-8 text out, or a 413/415 with the reason.
 * Compressed and binary files are recognised by their magic bytes, so their errors say what they are.
 */
import type { ImportIssue } from "@/lib/schemas/imports";
import { formatBytes } from "./issues";

/** Files above this import, with a warning to split them (API.md rule 7). */
export const LARGE_FILE_BYTES = 10 * 1024 * 1024;

export type DecodeResult =
  | { ok: true; text: string; warnings: ImportIssue[] }
  | { ok: false; status: 413 | 415; errors: ImportIssue[] };

const binarySignatures: Array<{ bytes: number[]; name: string; suggestion: string }> = [
  { bytes: [0x1f, 0x8b], name: "gzip-compressed data", suggestion: "Decompress it first (gunzip file.json.gz) and upload the .json file" },
  { bytes: [0x50, 0x4b, 0x03, 0x04], name: "a ZIP archive", suggestion: "Extract the JSON file from the archive and upload it" },
  { bytes: [0x28, 0xb5, 0x2f, 0xfd], name: "zstd-compressed data", suggestion: "Decompress it first (zstd -d) and upload the .json file" },
  { bytes: [0x42, 0x5a, 0x68], name: "bzip2-compressed data", suggestion: "Decompress it first (bunzip2) and upload the .json file" },
  { bytes: [0x25, 0x50, 0x44, 0x46], name: "a PDF document", suggestion: "Upload the conversations as a JSON file" },
  { bytes: [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65], name: "an SQLite database", suggestion: "Export the conversations to JSON and upload that" },
];

const reencode = "Re-save the file as UTF-8 (most editors: Save with encoding → UTF-8)";

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b);
}

/** The size limit alone, so the upload reader can refuse early with the same message. */
export function tooLargeIssue(size: number, limit: number, atLeast = false): ImportIssue {
  return {
    path: "(file)",
    message: atLeast
      ? `File too large: the upload exceeds ${formatBytes(limit)}`
      : `File too large: ${formatBytes(size)} exceeds ${formatBytes(limit)}`,
    suggestion: `Split the conversations into files under ${formatBytes(limit)} and import them one after another`,
  };
}

/** Decode an upload: size limit, magic bytes, byte-order marks, strict UTF-8. */
export function decodeUpload(bytes: Uint8Array, opts: { maxBytes: number }): DecodeResult {
  if (bytes.length > opts.maxBytes) return { ok: false, status: 413, errors: [tooLargeIssue(bytes.length, opts.maxBytes)] };

  const fail = (message: string, suggestion: string): DecodeResult => ({
    ok: false,
    status: 415,
    errors: [{ path: "(file)", message, suggestion }],
  });
  for (const sig of binarySignatures) {
    if (startsWith(bytes, sig.bytes)) return fail(`Unsupported file: ${sig.name}, not a JSON text file`, sig.suggestion);
  }
  if (startsWith(bytes, [0xff, 0xfe]) || startsWith(bytes, [0xfe, 0xff])) {
    return fail("Unsupported encoding: UTF-16 (only UTF-8 is accepted)", reencode);
  }

  // A UTF-8 byte-order mark is harmless; editors on Windows add it.
  const body = startsWith(bytes, [0xef, 0xbb, 0xbf]) ? bytes.subarray(3) : bytes;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    const at = firstInvalidUtf8(body);
    return fail(`Unsupported encoding: invalid UTF-8 byte 0x${body[at]?.toString(16).padStart(2, "0") ?? "??"} at byte ${at}`, reencode);
  }
  const nul = text.indexOf("\u0000");
  if (nul !== -1) {
    return fail(`Unsupported file: binary data (NUL byte at character ${nul}), not a JSON text file`, "Upload the conversations as a JSON or JSON Lines text file");
  }

  const warnings: ImportIssue[] = [];
  if (bytes.length > LARGE_FILE_BYTES) {
    warnings.push({
      path: "(file)",
      message: `Large file: ${formatBytes(bytes.length)} is over ${formatBytes(LARGE_FILE_BYTES)}`,
      suggestion: `Split it into files under ${formatBytes(LARGE_FILE_BYTES)}: smaller imports are quicker to review and to retry`,
    });
  }
  return { ok: true, text, warnings };
}

/** Offset of the first byte that breaks UTF-8; only called once the fast decoder has refused. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    const need = b < 0x80 ? 0 : b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (need < 0) return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
    }
    // Overlong three/four-byte forms, surrogates and code points past U+10FFFF.
    const c1 = bytes[i + 1];
    if ((b === 0xe0 && c1 < 0xa0) || (b === 0xed && c1 > 0x9f) || (b === 0xf0 && c1 < 0x90) || (b === 0xf4 && c1 > 0x8f)) return i;
    i += need + 1;
  }
  return Math.max(0, bytes.length - 1);
}
