/**
 * "Apply the suggested fix": the uploaded file's text → the fixed file's text. Client-safe (the import
 * page runs it on the file already in memory). The feedback's transformation is written against the
 * Turnscope shape the validator saw (after format detection), so it is applied to that same shape:
 * for a Turnscope file that is the file itself; a single conversation, an OpenAI message list or JSON
 * Lines come back as a Turnscope JSON file.
 */
import { applyTransformation, type Transformation } from "./apply-transformation";
import { normaliseUpload } from "./formats";
import { parseUpload } from "./parse";

export type FixedUpload =
  | { ok: true; text: string; renamed: number; mapped: number; conflicts: number }
  | { ok: false; reason: string };

// Past this size the fixed file is written without indentation, so the fix cannot push a file that
// was under the import size limit over it.
const PRETTY_PRINT_LIMIT = 5 * 1024 * 1024;

export function fixUploadText(text: string, transformation: Transformation): FixedUpload {
  const parsed = parseUpload(text.replace(/^\uFEFF/, ""));
  if (!parsed.ok) return { ok: false, reason: "The file is not valid JSON, so the fix cannot be applied to it." };
  const applied = applyTransformation(normaliseUpload(parsed).data, transformation);
  if (!applied.ok) return { ok: false, reason: `The suggested fix cannot be applied: ${applied.reason}.` };
  if (applied.renamed + applied.mapped === 0) {
    const why = applied.conflicts ? ` (${applied.conflicts} objects already have the target field)` : "";
    return { ok: false, reason: `The suggested fix changes nothing in this file${why}.` };
  }
  const fixed = JSON.stringify(applied.data, null, text.length > PRETTY_PRINT_LIMIT ? undefined : 2);
  return { ok: true, text: fixed, renamed: applied.renamed, mapped: applied.mapped, conflicts: applied.conflicts };
}

/** `chat.json` → `chat.fixed.json`; a file fixed again keeps one `.fixed`. */
export function fixedFileName(name: string): string {
  const base = name.replace(/(\.fixed)?\.(json|jsonl|ndjson)$/i, "") || "upload";
  return `${base}.fixed.json`;
}
