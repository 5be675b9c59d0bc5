"use client";

import { useEffect, useState } from "react";
import { Button } from "@/components/ui/button";
import { Table, Td, Th } from "@/components/ui/table";
import { apiFetch, ApiError } from "@/lib/client/api";
import { parseAnyMapping, type AnyImportMapping, type LlmFeedback, type MappingPreview } from "@/lib/schemas/imports";
import { SaveMapping, SavedMappingPicker } from "./saved-mappings";

type Preview = { ok: true; result: MappingPreview; mapping: AnyImportMapping } | { ok: false; reason: string; result?: MappingPreview };

const percent = (x: number) => `${Math.round(x * 100)}%`;

/** The mapping tried on the whole file by the server (POST /api/import-mappings/preview): nothing is written. */
async function previewOf(file: File, mappingText: string, signal: AbortSignal): Promise<Preview> {
  let json: unknown;
  try {
    json = JSON.parse(mappingText);
  } catch {
    return { ok: false, reason: "The mapping is not valid JSON" };
  }
  const mapping = parseAnyMapping(json);
  if (!mapping.ok) return { ok: false, reason: `Mapping: ${mapping.message}` };
  const form = new FormData();
  form.set("file", file);
  form.set("mapping", mappingText);
  try {
    const { data } = await apiFetch<MappingPreview>("/import-mappings/preview", { method: "POST", body: form, signal });
    if (!data.ok) return { ok: false, reason: data.errors?.[0] ? `${data.errors[0].path}: ${data.errors[0].message}` : "The mapping does not import the file", result: data };
    if (!data.messages) return { ok: false, reason: "The mapping reads no message from the file", result: data };
    return { ok: true, result: data, mapping: mapping.mapping };
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    return { ok: false, reason: error instanceof ApiError ? error.message : "The preview could not be read" };
  }
}

/**
 * When no format matched, the mapping the structural reader (or the judge model) wrote, checked on the server
 * to import the file: who wrote it and how it scored, the first conversation as it will be stored and what it
 * leaves out — tried again on the server as it is edited (or replaced by a saved mapping), imported with the
 * `mapping` form field ("Use it"), and savable under a name for the next file of the same shape.
 */
export function MappingEditor({
  file,
  mapping,
  feedback,
  pending,
  onImport,
}: {
  file: File;
  mapping: AnyImportMapping;
  feedback?: Pick<LlmFeedback, "mapping_by" | "mapping_rounds" | "mapping_score">;
  pending: boolean;
  onImport: (mapping: string) => void;
}) {
  const [mappingText, setMappingText] = useState(() => JSON.stringify(mapping, null, 2));
  const [picked, setPicked] = useState("");
  const [preview, setPreview] = useState<Preview | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    // Tried once the typing pauses, so each keystroke does not send the file.
    const timer = setTimeout(() => {
      setPreview(null);
      previewOf(file, mappingText, controller.signal).then(setPreview, () => undefined);
    }, 300);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [file, mappingText]);
  const by = feedback?.mapping_by;
  const score = preview?.ok ? preview.result.mapping_score : undefined;
  const leftOut = preview?.result?.not_imported ?? [];

  return (
    <div className="space-y-3" data-testid="mapping-editor">
      <h3 className="font-medium text-slate-900">Suggested mapping</h3>
      <p className="text-slate-600" data-testid="mapping-origin">
        No known format matched.{" "}
        {by && by !== "structure"
          ? `The judge model ${by} wrote this mapping from the file's shape${feedback?.mapping_rounds ? ` (in ${feedback.mapping_rounds} round${feedback.mapping_rounds === 1 ? "" : "s"})` : ""}; it was checked to import the file.`
          : "The structural reader found this mapping from the file's shape and checked that it imports the file."}{" "}
        Change it if a field is wrong.
      </p>
      <SavedMappingPicker
        id="mapping-editor-saved"
        label="Start from a saved mapping"
        emptyOption="The suggested mapping"
        value={picked}
        onPick={(saved) => {
          setPicked(saved ? String(saved.id) : "");
          setMappingText(JSON.stringify(saved?.mapping ?? mapping, null, 2));
        }}
      />
      <label className="block text-xs font-medium text-slate-700">
        Mapping (JSON)
        <textarea
          aria-label="Mapping"
          value={mappingText}
          onChange={(e) => setMappingText(e.target.value)}
          rows={8}
          spellCheck={false}
          className="mt-1 block w-full rounded border border-slate-300 p-2 font-mono text-xs"
        />
      </label>
      {preview === null ? <p className="text-xs text-slate-500">Trying the mapping on the file…</p> : null}
      {score ? (
        <p className="text-xs text-slate-600" data-testid="mapping-score">
          Keeps {percent(score.text_kept)} of the sampled text · {percent(score.calls_paired)} of tool calls with their result · {percent(score.turns_plausible)} of conversations with plausible turns
        </p>
      ) : null}
      {preview && !preview.ok ? (
        <p role="alert" className="text-xs text-red-700" data-testid="mapping-problem">
          {preview.reason}
        </p>
      ) : null}
      {preview?.ok ? (
        <div data-testid="mapping-preview">
          <p className="text-xs text-slate-500">
            First of {preview.result.conversations?.toLocaleString("en")} conversations ({preview.result.messages?.toLocaleString("en")} messages, {preview.result.steps?.toLocaleString("en")} steps), as it will be imported:
          </p>
          <Table aria-label="Mapping preview">
            <thead>
              <tr>
                <Th>Role</Th>
                <Th>Content</Th>
                <Th>Steps</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {(preview.result.first_conversation?.messages ?? []).map((r, i) => (
                <tr key={i}>
                  <Td className="font-mono text-xs">{r.role}</Td>
                  <Td className="whitespace-pre-wrap text-xs">{r.content}</Td>
                  <Td className="text-xs">{r.steps.length}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        </div>
      ) : null}
      {leftOut.length ? (
        <details className="text-xs text-slate-600" data-testid="mapping-left-out">
          <summary>Left out: {leftOut.reduce((n, x) => n + x.characters, 0).toLocaleString("en")} characters of the file in {leftOut.length} place{leftOut.length === 1 ? "" : "s"}</summary>
          <ul className="mt-1 list-disc pl-5">
            {leftOut.map((x, i) => (
              <li key={i}>
                <span className="font-mono">{x.path}</span>: {x.characters.toLocaleString("en")} characters{x.reason ? ` (${x.reason})` : ""}
              </li>
            ))}
          </ul>
        </details>
      ) : preview?.ok ? (
        <p className="text-xs text-slate-500">Nothing of the file&apos;s text is left out.</p>
      ) : null}
      <Button needs="annotator" type="button" disabled={pending || !preview?.ok} onClick={() => onImport(mappingText)}>
        {pending ? "Importing…" : "Use it: import with this mapping"}
      </Button>
      <SaveMapping mapping={preview?.ok ? preview.mapping : null} />
    </div>
  );
}
