"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { Field, Input } from "@/components/ui/field";
import { Select } from "@/components/ui/select";
import type { EvaluationLevel } from "@/lib/vocabulary";
import { apiFetch } from "@/lib/client/api";
import type { MetricTemplate } from "@/lib/schemas/metrics";
import { levelLabels, levels, outputTypeLabels } from "./labels";
import { TemplateForm } from "./template-form";

const TEMPLATES_KEY = ["metric-templates"];

/** The template library: filter by level and category, view, duplicate into mine, edit and delete mine. */
export function TemplateLibrary({ initial }: { initial: MetricTemplate[] }) {
  const queryClient = useQueryClient();
  const query = useQuery({
    queryKey: TEMPLATES_KEY,
    queryFn: async () => (await apiFetch<MetricTemplate[]>("/metric-templates")).data,
    initialData: initial,
  });
  const [level, setLevel] = useState<EvaluationLevel | "">("");
  const [category, setCategory] = useState("");
  const [search, setSearch] = useState("");
  const [editingId, setEditingId] = useState<number | "new" | null>(null);
  const [status, setStatus] = useState<string | null>(null);

  const all = query.data ?? [];
  const categories = [...new Set(all.map((t) => t.category).filter((c): c is string => !!c))].sort();
  const needle = search.trim().toLowerCase();
  const shown = all.filter(
    (t) =>
      (!level || t.evaluation_level === level) &&
      (!category || t.category === category) &&
      (!needle || `${t.name} ${t.description ?? ""}`.toLowerCase().includes(needle)),
  );
  const mine = shown.filter((t) => !t.is_system);
  const system = shown.filter((t) => t.is_system);

  const refresh = () => queryClient.invalidateQueries({ queryKey: TEMPLATES_KEY });
  const duplicate = useMutation({
    mutationFn: async (t: MetricTemplate) =>
      (
        await apiFetch<MetricTemplate>("/metric-templates", {
          method: "POST",
          json: {
            name: `${t.name} (copy)`.slice(0, 200),
            description: t.description,
            evaluation_level: t.evaluation_level,
            prompt: t.prompt,
            output_type: t.output_type,
            output_schema: t.output_schema ?? null,
            model_name: t.model_name,
            category: t.category,
          },
        })
      ).data,
    onSuccess: async (copy) => {
      await refresh();
      setStatus(`Duplicated into your templates as “${copy.name}”.`);
      setEditingId(copy.id);
    },
  });
  const remove = useMutation({
    mutationFn: async (t: MetricTemplate) => apiFetch<null>(`/metric-templates/${t.id}`, { method: "DELETE" }),
    onSuccess: async (_res, t) => {
      await refresh();
      setStatus(`Deleted “${t.name}”. Metrics created from it keep working.`);
    },
  });
  const actionError = duplicate.error ?? remove.error;

  const row = (t: MetricTemplate) => (
    <TemplateItem
      key={t.id}
      template={t}
      editing={editingId === t.id}
      busy={duplicate.isPending || remove.isPending}
      onDuplicate={() => duplicate.mutate(t)}
      onEdit={() => setEditingId(t.id)}
      onDelete={() => {
        if (window.confirm(`Delete your template “${t.name}”? This cannot be undone.`)) remove.mutate(t);
      }}
      onSaved={async (saved) => {
        await refresh();
        setEditingId(null);
        setStatus(`Saved “${saved.name}”.`);
      }}
      onCancel={() => setEditingId(null)}
    />
  );

  return (
    <div className="space-y-6">
      <Card>
        <div className="grid gap-4 px-5 py-4 sm:grid-cols-3" role="search" aria-label="Filter templates">
          <Field id="filter-level" label="Level">
            <Select id="filter-level" value={level} onChange={(e) => setLevel(e.target.value as EvaluationLevel | "")}>
              <option value="">All levels</option>
              {levels.map((l) => (
                <option key={l} value={l}>
                  {levelLabels[l]}
                </option>
              ))}
            </Select>
          </Field>
          <Field id="filter-category" label="Category">
            <Select id="filter-category" value={category} onChange={(e) => setCategory(e.target.value)}>
              <option value="">All categories</option>
              {categories.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </Select>
          </Field>
          <Field id="filter-search" label="Search">
            <Input id="filter-search" type="search" value={search} placeholder="Name or description" onChange={(e) => setSearch(e.target.value)} />
          </Field>
        </div>
      </Card>
      {status ? (
        <p role="status" className="text-sm text-emerald-700">
          {status}
        </p>
      ) : null}
      {actionError ? (
        <p role="alert" className="text-sm text-red-600">
          {actionError.message}
        </p>
      ) : null}

      <section aria-label="My templates">
        <Card>
          <CardHeader
            title="My templates"
            description="Yours to edit and delete. Duplicate a built-in template to start from it."
            actions={
              <Button needs="annotator" size="sm" onClick={() => setEditingId("new")} disabled={editingId === "new"}>
                New template
              </Button>
            }
          />
          {editingId === "new" ? (
            <div className="border-b border-slate-100 px-5 py-4">
              <TemplateForm
                onSaved={async (saved) => {
                  await refresh();
                  setEditingId(null);
                  setStatus(`Created “${saved.name}”.`);
                }}
                onCancel={() => setEditingId(null)}
              />
            </div>
          ) : null}
          {mine.length ? (
            <ul className="divide-y divide-slate-100">{mine.map(row)}</ul>
          ) : (
            <p className="px-5 py-6 text-sm text-slate-500">{all.some((t) => !t.is_system) ? "None match the filters." : "No templates of your own yet."}</p>
          )}
        </Card>
      </section>

      <section aria-label="Built-in templates">
        <Card>
          <CardHeader title="Built-in templates" description={`${system.length} shown · read-only, kept up to date by Turnscope`} />
          {system.length ? (
            <ul className="divide-y divide-slate-100">{system.map(row)}</ul>
          ) : (
            <p className="px-5 py-6 text-sm text-slate-500">None match the filters.</p>
          )}
        </Card>
      </section>
    </div>
  );
}

function TemplateItem({
  template: t,
  editing,
  busy,
  onDuplicate,
  onEdit,
  onDelete,
  onSaved,
  onCancel,
}: {
  template: MetricTemplate;
  editing: boolean;
  busy: boolean;
  onDuplicate: () => void;
  onEdit: () => void;
  onDelete: () => void;
  onSaved: (saved: MetricTemplate) => void;
  onCancel: () => void;
}) {
  const [open, setOpen] = useState(false);
  const detailsId = `template-${t.id}-details`;
  return (
    <li className="px-5 py-4" data-testid="template-item" aria-label={t.name}>
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0 flex-1">
          <div className="flex flex-wrap items-center gap-2">
            <h3 className="font-medium text-slate-900">{t.name}</h3>
            <Badge tone="brand">{levelLabels[t.evaluation_level]}</Badge>
            <Badge>{outputTypeLabels[t.output_type]}</Badge>
            {t.category ? <Badge tone="neutral">{t.category}</Badge> : null}
          </div>
          {t.description ? <p className="mt-1 text-sm text-slate-600">{t.description}</p> : null}
        </div>
        <div className="flex shrink-0 gap-1">
          <Button variant="ghost" size="sm" aria-expanded={open} aria-controls={detailsId} onClick={() => setOpen(!open)}>
            {open ? "Hide" : "View"}
          </Button>
          <Button needs="annotator" variant="ghost" size="sm" disabled={busy} onClick={onDuplicate}>
            Duplicate
          </Button>
          {!t.is_system ? (
            <>
              <Button needs="annotator" variant="ghost" size="sm" disabled={editing} onClick={onEdit}>
                Edit
              </Button>
              <Button needs="annotator" variant="ghost" size="sm" className="text-red-700" disabled={busy} onClick={onDelete}>
                Delete
              </Button>
            </>
          ) : null}
        </div>
      </div>
      {open ? (
        <div id={detailsId} className="mt-3 space-y-2">
          <div className="flex flex-wrap items-center gap-1.5 text-sm">
            <span className="text-slate-500">{t.is_advanced ? "Variables:" : "Basic mode (no variables)"}</span>
            {t.template_variables.map((v) => (
              <Badge key={v} tone="success">
                <span className="font-mono">{v}</span>
              </Badge>
            ))}
          </div>
          <pre className="max-h-96 overflow-auto whitespace-pre-wrap rounded-md bg-slate-50 p-3 font-mono text-xs text-slate-800">{t.prompt}</pre>
          {t.output_schema ? (
            <details className="text-sm">
              <summary className="cursor-pointer text-slate-600">Output schema</summary>
              <pre className="mt-1 max-h-72 overflow-auto rounded-md bg-slate-50 p-3 font-mono text-xs text-slate-700">
                {JSON.stringify(t.output_schema, null, 2)}
              </pre>
            </details>
          ) : null}
        </div>
      ) : null}
      {editing ? (
        <div className="mt-4 rounded-md border border-slate-200 p-4">
          <TemplateForm template={t} onSaved={onSaved} onCancel={onCancel} />
        </div>
      ) : null}
    </li>
  );
}
