"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useRef, useState, type DragEvent, type FormEvent } from "react";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { Field, Input, Textarea } from "@/components/ui/field";
import type { Dataset } from "@/lib/schemas/datasets";
import type { ImportFailure, ImportSuccess } from "@/lib/schemas/imports";
import { ApplyFix } from "./apply-fix";
import { ImportFailed, ImportSucceeded } from "./import-result";
import { MappingEditor } from "./mapping-editor";
import { SavedMappingPicker } from "./saved-mappings";

/** `fixedFrom`: the refused file's name, when the upload was its suggested fix. */
type Outcome =
  | { kind: "success"; result: ImportSuccess; fixedFrom?: string }
  | { kind: "failure"; status: number; result: ImportFailure; file: File; fixedFrom?: string; attempt: number }
  | { kind: "error"; message: string };

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

const nameFromFile = (file: File) => file.name.replace(/\.(jsonl|json|ndjson)$/i, "").slice(0, 200);

/** A fresh Idempotency-Key: one per import the person means, so a repeated click replays it instead of importing again. */
const newKey = () => (typeof crypto !== "undefined" && "randomUUID" in crypto ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`);

/** Upload a conversations file into a new or existing dataset and show what happened. */
export function ImportPanel({ datasets, initialDatasetId }: { datasets: Dataset[]; initialDatasetId?: number }) {
  const queryClient = useQueryClient();
  // The first file is `file`; more files are imported with it, joined on `joinKey`.
  const [files, setFiles] = useState<File[]>([]);
  const [joinKey, setJoinKey] = useState("");
  const file = files[0] ?? null;
  const [dragging, setDragging] = useState(false);
  const [mode, setMode] = useState<"new" | "existing">(initialDatasetId ? "existing" : "new");
  const [datasetId, setDatasetId] = useState<string>(initialDatasetId ? String(initialDatasetId) : String(datasets[0]?.id ?? ""));
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [feedback, setFeedback] = useState(true);
  // A saved mapping's id: the file is read with it instead of detecting the format.
  const [mappingId, setMappingId] = useState("");
  const [formError, setFormError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  // Set before the first await of an upload: a second click in the same moment finds it and does nothing.
  const sending = useRef(false);
  // What was sent (files and fields) with the key it was sent under: the same request again reuses the key, so the
  // server answers with the first outcome and creates nothing twice; a change of file or field gets a new key.
  const lastRequest = useRef<{ signature: string; key: string } | null>(null);
  // The request that imported: the Import button stays disabled until the file or a field changes.
  const [imported, setImported] = useState<string | null>(null);
  const requestSignature = (upload: File, extra: string, more: File[]) =>
    JSON.stringify([
      [upload, ...more].map((f) => [f.name, f.size, f.lastModified]),
      mode,
      mode === "new" ? [name.trim(), description] : datasetId,
      feedback,
      mappingId,
      joinKey.trim(),
      extra,
    ]);
  const current = file ? requestSignature(file, "", files.slice(1)) : null;
  const alreadyImported = current !== null && current === imported;
  // Numbers each upload, so a new failure gets a fresh fix panel rather than the last one's state.
  const attempts = useRef(0);

  function choose(list: FileList | null | undefined) {
    const next = list ? [...list] : [];
    if (!next.length) return;
    setFiles(next);
    setOutcome(null);
    setFormError(null);
    if (!name) setName(nameFromFile(next[0]));
  }

  function onDrop(e: DragEvent) {
    e.preventDefault();
    setDragging(false);
    choose(e.dataTransfer.files);
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (sending.current || alreadyImported) return;
    setOutcome(null);
    if (!file) return setFormError("Choose a file to import");
    if (checkForm()) await send(file, undefined, undefined, files.slice(1));
  }

  function checkForm(): boolean {
    const problem =
      mode === "new" && !name.trim()
        ? "Give the new dataset a name"
        : mode === "existing" && !datasetId
          ? "Choose a dataset"
          : files.length > 1 && !joinKey.trim()
            ? "Name the field that joins the files' records (e.g. question_id)"
            : null;
    setFormError(problem);
    return !problem;
  }

  /** The refused file's suggested fix goes in as a new file, with the same dataset choice. */
  async function importFixed(fixed: File, refused: File) {
    setFiles([fixed]);
    // The failure view stays until the answer replaces it, so the button can show that it is working.
    if (checkForm()) await send(fixed, refused.name);
  }

  /** `more`: files joined with `upload` on the join key (no mapping then: a mapping reads one file). */
  async function send(upload: File, fixedFrom?: string, mapping?: string, more: File[] = []) {
    if (sending.current) return;
    sending.current = true;
    const signature = requestSignature(upload, `${fixedFrom ?? ""}\u0000${mapping ?? ""}`, more);
    if (lastRequest.current?.signature !== signature) lastRequest.current = { signature, key: newKey() };
    const form = new FormData();
    form.append("file", upload);
    for (const f of more) form.append("file", f);
    form.append("get_feedback", String(feedback));
    if (more.length) form.append("join_key", joinKey.trim());
    else if (mapping) form.append("mapping", mapping);
    else if (mappingId && !fixedFrom) form.append("mapping_id", mappingId);
    if (mode === "new") {
      form.append("name", name.trim());
      if (description.trim()) form.append("description", description);
    }
    const url = mode === "new" ? "/api/datasets/import" : `/api/datasets/${datasetId}/import`;
    setPending(true);
    try {
      const res = await fetch(url, { method: "POST", body: form, headers: { "Idempotency-Key": lastRequest.current.key } });
      const body = (await res.json().catch(() => null)) as (ImportSuccess | ImportFailure | { error?: { message?: string } }) | null;
      if (body && "success" in body && body.success) {
        setOutcome({ kind: "success", result: body, fixedFrom });
        // As the form reads it now (a fixed file has replaced the refused one in the form).
        setImported(requestSignature(upload, "", more));
        await queryClient.invalidateQueries({ queryKey: ["datasets"] });
      } else if (body && "success" in body) {
        setOutcome({ kind: "failure", status: res.status, result: body, file: upload, fixedFrom, attempt: ++attempts.current });
      } else setOutcome({ kind: "error", message: body?.error?.message ?? `The server answered ${res.status}` });
    } catch (error) {
      setOutcome({ kind: "error", message: `The upload did not reach the server: ${(error as Error).message}` });
    } finally {
      sending.current = false;
      setPending(false);
    }
  }

  return (
    <div className="grid gap-6 lg:grid-cols-[24rem_1fr]">
      <Card className="h-fit">
        <CardHeader title="Upload" description="Turnscope JSON, OpenAI chat and Responses, AI SDK UI messages, Gemini contents, ShareGPT, Anthropic Messages, records, coding-agent sessions, message trees, agent trajectories and event streams, eval logs, CSV or JSON Lines. UTF-8." />
        <form onSubmit={submit} className="space-y-5 px-5 py-4" noValidate aria-label="Import conversations">
          <div
            data-testid="drop-zone"
            onDragOver={(e) => {
              e.preventDefault();
              setDragging(true);
            }}
            onDragLeave={() => setDragging(false)}
            onDrop={onDrop}
            className={cn(
              "rounded-lg border-2 border-dashed px-4 py-6 text-center text-sm transition-colors",
              dragging ? "border-brand-500 bg-brand-50" : "border-slate-300 bg-slate-50",
            )}
          >
            <p className="text-slate-600">Drop a file here (or several that belong together), or</p>
            <label htmlFor="import-file" className="mt-2 inline-block cursor-pointer font-medium text-brand-700 hover:underline">
              choose a file
            </label>
            <input
              id="import-file"
              name="file"
              type="file"
              accept=".json,.jsonl,.ndjson,.traj,.csv,application/json"
              multiple
              className="sr-only"
              onChange={(e) => choose(e.target.files)}
            />
            {files.map((f) => (
              <p key={f.name} className="mt-3 break-all text-slate-800" data-testid="chosen-file">
                {f.name} <span className="whitespace-nowrap text-slate-500">({formatSize(f.size)})</span>
              </p>
            ))}
          </div>

          {files.length > 1 ? (
            <Field
              id="import-join-key"
              label="Join on"
              hint={`The field every record of the ${files.length} files shares (e.g. question_id); each file's turns keep their role`}
            >
              <Input id="import-join-key" value={joinKey} maxLength={200} onChange={(e) => setJoinKey(e.target.value)} />
            </Field>
          ) : null}

          <fieldset className="space-y-2">
            <legend className="text-sm font-medium text-slate-700">Import into</legend>
            <label className="flex items-center gap-2 text-sm">
              <input type="radio" name="mode" value="new" checked={mode === "new"} onChange={() => setMode("new")} />
              A new dataset
            </label>
            <label className="flex items-center gap-2 text-sm">
              <input
                type="radio"
                name="mode"
                value="existing"
                checked={mode === "existing"}
                disabled={datasets.length === 0}
                onChange={() => setMode("existing")}
              />
              An existing dataset
            </label>
          </fieldset>

          {mode === "new" ? (
            <>
              <Field id="import-name" label="Dataset name">
                <Input id="import-name" value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />
              </Field>
              <Field id="import-description" label="Description" hint="Optional">
                <Textarea id="import-description" value={description} maxLength={5000} onChange={(e) => setDescription(e.target.value)} />
              </Field>
            </>
          ) : (
            <Field id="import-dataset" label="Dataset">
              <select
                id="import-dataset"
                value={datasetId}
                onChange={(e) => setDatasetId(e.target.value)}
                className="block h-10 w-full rounded-md border border-slate-300 bg-white px-3 text-sm shadow-sm"
              >
                {datasets.map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.name} ({d.conversation_count} conversations)
                  </option>
                ))}
              </select>
            </Field>
          )}

          {files.length > 1 ? null : (
            <SavedMappingPicker
              id="import-mapping"
              label="Read the file with"
              emptyOption="The detected format"
              value={mappingId}
              onPick={(saved) => setMappingId(saved ? String(saved.id) : "")}
            />
          )}

          <label className="flex items-center gap-2 text-sm text-slate-700">
            <input type="checkbox" checked={feedback} onChange={(e) => setFeedback(e.target.checked)} />
            Explain what to change if the file is refused
          </label>

          {formError ? (
            <p role="alert" className="text-sm text-red-600">
              {formError}
            </p>
          ) : null}
          <Button
            needs="annotator"
            type="submit"
            disabled={pending || alreadyImported}
            title={alreadyImported ? "This file was imported with these settings; choose another file or change a field to import again" : undefined}
            className="w-full"
          >
            {pending ? "Importing…" : alreadyImported ? "Imported" : "Import"}
          </Button>
          {alreadyImported ? (
            <p className="text-xs text-slate-500" data-testid="import-done-hint">
              Imported. Choose another file (or change a field) to import again.
            </p>
          ) : null}
        </form>
      </Card>

      <div aria-live="polite">
        {outcome?.kind === "success" ? <ImportSucceeded result={outcome.result} fixedFrom={outcome.fixedFrom} /> : null}
        {outcome?.kind === "failure" ? (
          <ImportFailed
            result={outcome.result}
            status={outcome.status}
            fixedFrom={outcome.fixedFrom}
            fixAction={
              files.length > 1 ? null : outcome.result.llm_feedback?.suggested_transformation ? (
                <ApplyFix
                  key={outcome.attempt}
                  file={outcome.file}
                  transformation={outcome.result.llm_feedback.suggested_transformation}
                  pending={pending}
                  onImport={(fixed) => void importFixed(fixed, outcome.file)}
                />
              ) : outcome.result.llm_feedback?.suggested_mapping ? (
                <MappingEditor
                  key={outcome.attempt}
                  file={outcome.file}
                  mapping={outcome.result.llm_feedback.suggested_mapping}
                  feedback={outcome.result.llm_feedback}
                  pending={pending}
                  onImport={(mapping) => {
                    if (checkForm()) void send(outcome.file, undefined, mapping);
                  }}
                />
              ) : null
            }
          />
        ) : null}
        {outcome?.kind === "error" ? (
          <Card className="border-red-200">
            <p role="alert" className="px-5 py-4 text-sm text-red-700">
              {outcome.message}
            </p>
          </Card>
        ) : null}
        {!outcome ? (
          <Card>
            <div className="space-y-2 px-5 py-10 text-center text-sm text-slate-500">
              <p>The file is checked in stages: encoding, JSON syntax, structure, then values.</p>
              <p>Nothing is written unless the whole file passes.</p>
            </div>
          </Card>
        ) : null}
      </div>
    </div>
  );
}
