"use client";

import { useEffect, useMemo, useState } from "react";
import { Button } from "@/components/ui/button";
import { Table, Td, Th } from "@/components/ui/table";
import { applyAnyMapping } from "@/lib/import/mapping";
import { parseUpload } from "@/lib/import/parse";
import { parseAnyMapping, type AnyImportMapping } from "@/lib/schemas/imports";
import { SaveMapping, SavedMappingPicker } from "./saved-mappings";

type PreviewRow = { role: string; content: string; steps: number };
type Preview = { ok: true; rows: PreviewRow[]; conversations: number; mapping: AnyImportMapping } | { ok: false; reason: string };

/** The first conversation the mapping reads from the file, or why it reads none. */
function previewOf(text: string, mappingText: string): Preview {
  let json: unknown;
  try {
    json = JSON.parse(mappingText);
  } catch {
    return { ok: false, reason: "The mapping is not valid JSON" };
  }
  const mapping = parseAnyMapping(json);
  if (!mapping.ok) return { ok: false, reason: `Mapping: ${mapping.message}` };
  const parsed = parseUpload(text);
  if (!parsed.ok) return { ok: false, reason: parsed.errors[0]?.message ?? "The file does not parse" };
  const normalised = applyAnyMapping(parsed, mapping.mapping);
  if (normalised.errors?.length) return { ok: false, reason: normalised.errors[0].message };
  const conversations = (normalised.data as { conversations: unknown[] }).conversations;
  const first = conversations[0] as { messages?: Array<{ role?: unknown; content?: unknown; steps?: unknown[] }> } | undefined;
  if (!first?.messages) return { ok: false, reason: "The mapping reads no message list from the first record" };
  return {
    ok: true,
    mapping: mapping.mapping,
    conversations: conversations.length,
    rows: first.messages.map((m) => ({ role: String(m.role ?? "(none)"), content: typeof m.content === "string" ? m.content : "", steps: m.steps?.length ?? 0 })),
  };
}

/**
 * When no format matched, the rules' mapping (checked on the server to import the file): shown applied
 * to the first conversation, editable (or replaced by a saved mapping), imported with the `mapping` form
 * field, and savable under a name for the next file of the same shape.
 */
export function MappingEditor({
  file,
  mapping,
  pending,
  onImport,
}: {
  file: File;
  mapping: AnyImportMapping;
  pending: boolean;
  onImport: (mapping: string) => void;
}) {
  const [text, setText] = useState<string | null>(null);
  const [mappingText, setMappingText] = useState(() => JSON.stringify(mapping, null, 2));
  const [picked, setPicked] = useState("");
  useEffect(() => {
    let live = true;
    void file.text().then((t) => live && setText(t));
    return () => {
      live = false;
    };
  }, [file]);
  const preview = useMemo(() => (text === null ? null : previewOf(text, mappingText)), [text, mappingText]);

  return (
    <div className="space-y-3" data-testid="mapping-editor">
      <h3 className="font-medium text-slate-900">Suggested mapping</h3>
      <p className="text-slate-600">No known format matched. This mapping reads the file; change it if a field is wrong.</p>
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
      {preview === null ? <p className="text-xs text-slate-500">Reading the file…</p> : null}
      {preview && !preview.ok ? (
        <p role="alert" className="text-xs text-red-700" data-testid="mapping-problem">
          {preview.reason}
        </p>
      ) : null}
      {preview?.ok ? (
        <div data-testid="mapping-preview">
          <p className="text-xs text-slate-500">First of {preview.conversations} conversations, as it will be imported:</p>
          <Table aria-label="Mapping preview">
            <thead>
              <tr>
                <Th>Role</Th>
                <Th>Content</Th>
                <Th>Steps</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {preview.rows.map((r, i) => (
                <tr key={i}>
                  <Td className="font-mono text-xs">{r.role}</Td>
                  <Td className="text-xs">{r.content}</Td>
                  <Td className="text-xs">{r.steps}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        </div>
      ) : null}
      <Button needs="annotator" type="button" disabled={pending || !preview?.ok} onClick={() => onImport(mappingText)}>
        {pending ? "Importing…" : "Import with this mapping"}
      </Button>
      <SaveMapping mapping={preview?.ok ? preview.mapping : null} />
    </div>
  );
}
