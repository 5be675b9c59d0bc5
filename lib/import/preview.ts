/**
 * A mapping tried on a file without importing it (issue 49.4): what the import page's mapping editor shows
 * and `POST /api/import-mappings/preview` answers — the first conversation as it would be stored, the
 * counts, how the mapping scored (text kept, calls paired, turns plausible) and what it leaves out, or why
 * it reads nothing. The file is read on the input pool, as an import is; nothing is written.
 */
import "server-only";
import type { AnyImportMapping, MappingPreview } from "@/lib/schemas/imports";
import { checkUploadOffLoop } from "./index";

const TEXT = 2000;
const clip = (s: string | null) => (s === null ? null : s.length > TEXT ? `${s.slice(0, TEXT)}… (${s.length} characters)` : s);

/** The mapping applied to the whole file and checked as an import would be; the first conversation shown. */
export async function previewMapping(bytes: Uint8Array, mapping: AnyImportMapping, maxBytes: number): Promise<MappingPreview> {
  const checked = await checkUploadOffLoop(bytes, { maxBytes, mapping, scoreMapping: true, inferInOneStep: false });
  if (!checked.ok) {
    return { ok: false, errors: checked.errors.slice(0, 20), warnings: checked.warnings.slice(0, 20), not_imported: (checked.notImported ?? []).slice(0, 20) };
  }
  const first = checked.conversations[0];
  return {
    ok: true,
    conversations: checked.counts.conversations,
    messages: checked.counts.messages,
    steps: checked.counts.steps,
    ...(checked.mappingScore ? { mapping_score: checked.mappingScore } : {}),
    not_imported: checked.notImported.slice(0, 20),
    warnings: checked.warnings.slice(0, 20),
    first_conversation: first
      ? {
          name: first.name,
          messages: first.messages.slice(0, 200).map((m) => ({
            role: m.role,
            content: clip(m.content),
            steps: m.steps.map((s) => ({
              thinking: clip(s.thinking),
              tool_call: s.toolCall ?? null,
              tool_result: typeof s.toolResult === "string" ? clip(s.toolResult) : (s.toolResult ?? null),
            })),
          })),
        }
      : null,
  };
}
