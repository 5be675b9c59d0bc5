"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useMemo, useState, type FormEvent } from "react";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { Field, Input } from "@/components/ui/field";
import { Select } from "@/components/ui/select";
import { ApiError, apiFetch } from "@/lib/client/api";
import type { MetricReference } from "@/lib/schemas/labels";
import type { Metric } from "@/lib/schemas/metrics";
import type { MetaFields, ReferencePreview } from "@/lib/schemas/references";

type Ops = NonNullable<Extract<MetricReference, { source: "meta" }>["rule"]>["op"];
const ops: Ops[] = ["==", "!=", ">=", ">", "<=", "<"];

type Draft = {
  source: "none" | "meta" | "labels";
  level: "conversation" | "message";
  path: string;
  op: Ops | "";
  value: string;
  userId: string;
};

function draftOf(metric: Metric): Draft {
  const r = metric.reference as MetricReference | null;
  const base: Draft = { source: "none", level: "conversation", path: "", op: "", value: "", userId: "" };
  if (!r) return base;
  if (r.source === "labels") return { ...base, source: "labels", userId: r.user_id ?? "" };
  return { ...base, source: "meta", level: r.level, path: r.path, op: r.rule?.op ?? "", value: r.rule ? String(r.rule.value) : "" };
}

/** A rule's value as typed: a number when it reads as one, true/false as booleans, else the text. */
export function ruleValueOf(text: string): number | string | boolean {
  const t = text.trim();
  if (t === "true") return true;
  if (t === "false") return false;
  if (t !== "" && Number.isFinite(Number(t))) return Number(t);
  return text;
}

function referenceOf(d: Draft): MetricReference | null {
  if (d.source === "none") return null;
  if (d.source === "labels") return d.userId.trim() ? { source: "labels", user_id: d.userId.trim() } : { source: "labels" };
  return { source: "meta", level: d.level, path: d.path.trim(), ...(d.op ? { rule: { op: d.op, value: ruleValueOf(d.value) } } : {}) };
}

const errorText = (e: unknown) =>
  e instanceof ApiError ? `${e.message}${e.details.length ? ` (${e.details.map((x) => `${x.path}: ${x.message}`).join("; ")})` : ""}` : String(e);

const show = (v: unknown) => (typeof v === "string" ? JSON.stringify(v) : String(v));

/**
 * A metric's reference — the truth its verdicts are checked against: a field of the dataset's meta (picked
 * from the fields the dataset has, with a rule making it pass/fail) or human labels. Shows how the
 * metric's cells read under it before saving (the server's preview), and saves it alone.
 */
export function ReferenceFields({ metric }: { metric: Metric }) {
  const router = useRouter();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<Draft>(() => draftOf(metric));
  const [saved, setSaved] = useState<string | null>(null);
  const set = (patch: Partial<Draft>) => {
    setDraft((d) => ({ ...d, ...patch }));
    setSaved(null);
  };
  const reference = useMemo(() => referenceOf(draft), [draft]);
  const fields = useQuery({
    queryKey: ["meta-fields", metric.dataset_id],
    queryFn: async () => (await apiFetch<MetaFields>(`/datasets/${metric.dataset_id}/meta-fields`)).data,
    staleTime: 60_000,
  });
  // The preview follows the draft, a moment after the last keystroke.
  const [previewed, setPreviewed] = useState<MetricReference | null>(reference);
  useEffect(() => {
    const t = setTimeout(() => setPreviewed(reference), 300);
    return () => clearTimeout(t);
  }, [reference]);
  const incomplete = previewed?.source === "meta" && !previewed.path;
  const preview = useQuery({
    queryKey: ["reference-preview", metric.id, previewed],
    enabled: previewed !== null && !incomplete,
    retry: false,
    queryFn: async () => (await apiFetch<ReferencePreview>(`/evaluation-pipeline-nodes/${metric.id}/reference-preview`, { method: "POST", json: { reference: previewed } })).data,
  });
  const save = useMutation({
    mutationFn: async () => (await apiFetch<Metric>(`/evaluation-pipeline-nodes/${metric.id}`, { method: "PATCH", json: { reference } })).data,
    onSuccess: async () => {
      setSaved(reference ? "Reference saved." : "Reference removed.");
      await queryClient.invalidateQueries({ queryKey: ["metrics", metric.dataset_id] });
      await queryClient.invalidateQueries({ queryKey: ["agreement", metric.dataset_id] });
      router.refresh();
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    save.mutate();
  }

  const levelFields = fields.data ? fields.data[draft.level] : [];
  const chosen = levelFields.find((f) => f.path === draft.path);
  const textMetric = metric.output_type === "text";
  return (
    <Card id="reference" className="scroll-mt-20">
      <CardHeader
        title="Reference"
        description="The truth this metric's verdicts are checked against in the review queue and on the agreement page: a meta field of the data (a rule makes it pass/fail) or human labels."
      />
      <form onSubmit={submit} aria-label="Reference" className="space-y-4 px-5 py-4">
        <fieldset className="space-y-2">
          <legend className="text-sm font-medium text-slate-700">Source</legend>
          <div className="flex gap-4 text-sm">
            {(
              [
                ["none", "None"],
                ["meta", "A meta field"],
                ["labels", "Human labels"],
              ] as const
            ).map(([value, text]) => (
              <label key={value} className="flex items-center gap-2">
                <input type="radio" name="reference-source" value={value} checked={draft.source === value} onChange={() => set({ source: value })} />
                {text}
              </label>
            ))}
          </div>
        </fieldset>
        {draft.source === "meta" ? (
          <>
            <div className="grid gap-4 sm:grid-cols-[10rem_minmax(0,1fr)]">
              <Field id="reference-level" label="Meta of">
                <Select id="reference-level" value={draft.level} onChange={(e) => set({ level: e.target.value as Draft["level"], path: "" })}>
                  <option value="conversation">the conversation</option>
                  <option value="message" disabled={metric.evaluation_level === "conversation"}>
                    the message{metric.evaluation_level === "conversation" ? " (message or step metrics)" : ""}
                  </option>
                </Select>
              </Field>
              <Field
                id="reference-path"
                label="Field"
                hint={
                  fields.data
                    ? levelFields.length
                      ? `${levelFields.length} fields in the ${draft.level} meta of this dataset`
                      : `This dataset's ${draft.level} meta has no fields`
                    : fields.error
                      ? `Could not list the fields: ${errorText(fields.error)}`
                      : "Reading the dataset's meta fields…"
                }
              >
                <Select id="reference-path" value={draft.path} onChange={(e) => set({ path: e.target.value })}>
                  <option value="">Choose a field…</option>
                  {draft.path && !chosen ? <option value={draft.path}>{draft.path}</option> : null}
                  {levelFields.map((f) => (
                    <option key={f.path} value={f.path}>
                      {f.path} — {f.examples.map(show).join(", ")} ({f.count})
                    </option>
                  ))}
                </Select>
              </Field>
            </div>
            <div className="grid gap-4 sm:grid-cols-[10rem_minmax(0,1fr)]">
              <Field id="reference-op" label="Rule" hint={textMetric ? "A text metric compares categories: no rule." : "Passes when field <op> value"}>
                <Select id="reference-op" value={draft.op} disabled={textMetric} onChange={(e) => set({ op: e.target.value as Draft["op"] })}>
                  <option value="">No rule (the value itself)</option>
                  {ops.map((op) => (
                    <option key={op} value={op}>
                      {op}
                    </option>
                  ))}
                </Select>
              </Field>
              <Field id="reference-value" label="Value" hint="A number, true/false, or text">
                <Input id="reference-value" value={draft.value} disabled={!draft.op} onChange={(e) => set({ value: e.target.value })} placeholder={chosen ? show(chosen.examples[0]) : "1"} />
              </Field>
            </div>
          </>
        ) : null}
        {draft.source === "labels" ? (
          <Field id="reference-user" label="Only the labels of" hint="A user id; empty: the most recent label of anyone">
            <Input id="reference-user" value={draft.userId} onChange={(e) => set({ userId: e.target.value })} placeholder="anyone" />
          </Field>
        ) : null}

        <section aria-label="Reference preview" aria-live="polite" className="rounded-md bg-slate-50 px-3 py-2 text-sm" data-testid="reference-preview">
          {draft.source === "none" ? (
            <span className="text-slate-500">No reference: agreement can still compare runs and labels.</span>
          ) : incomplete ? (
            <span className="text-slate-500">Choose a field to see how the cells read.</span>
          ) : preview.error ? (
            <span role="alert" className="text-red-700">
              {errorText(preview.error)}
            </span>
          ) : preview.data ? (
            <span>
              Of <strong>{preview.data.cells}</strong> cells: <strong className="text-emerald-700">{preview.data.pass} pass</strong> ·{" "}
              <strong className="text-amber-700">{preview.data.fail} fail</strong>
              {preview.data.other ? <> · {preview.data.other} read as a value</> : null} · {preview.data.missing} without a reading
            </span>
          ) : (
            <span className="text-slate-500">Reading the cells…</span>
          )}
        </section>
        {save.error ? (
          <p role="alert" className="text-sm text-red-600">
            {errorText(save.error)}
          </p>
        ) : null}
        {saved ? (
          <p role="status" className="text-sm text-emerald-700">
            {saved}
          </p>
        ) : null}
        <div className="flex justify-end border-t border-slate-100 pt-4">
          <Button needs="annotator" type="submit" disabled={save.isPending || (draft.source === "meta" && !draft.path.trim())}>
            {save.isPending ? "Saving…" : "Save reference"}
          </Button>
        </div>
      </form>
    </Card>
  );
}
