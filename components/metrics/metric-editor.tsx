"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { Field } from "@/components/ui/field";
import { Select } from "@/components/ui/select";
import { apiFetch } from "@/lib/client/api";
import { checkPromptVariables } from "@/lib/metrics/variables";
import type { Metric, MetricTemplate } from "@/lib/schemas/metrics";
import { apiErrorFields, DefinitionFields, draftFrom, draftToBody, emptyDraft, type DefinitionDraft } from "./definition-fields";
import { DependencyFields, dependencyDraftFrom, dependencyDraftToBody, type DependencyBody, type DependencyDraft } from "./dependency-fields";
import { levelLabels, levels } from "./labels";
import { PreviewPanel } from "./preview-panel";

type Source = "template" | "scratch";

/**
 * Create a metric from a template (its fields are copied and can be changed before saving) or from
 * scratch, or edit an existing one; with a live preview against the dataset's real conversations.
 */
export function MetricEditor({
  datasetId,
  templates,
  metric,
  initialTemplateId,
  metrics = [],
}: {
  datasetId: number;
  templates: MetricTemplate[];
  metric?: Metric;
  initialTemplateId?: number;
  /** The dataset's metrics: the ones this metric may depend on (itself excluded). */
  metrics?: Metric[];
}) {
  const router = useRouter();
  const queryClient = useQueryClient();
  const initialTemplate = templates.find((t) => t.id === initialTemplateId);
  const [source, setSource] = useState<Source>(metric || initialTemplate ? "template" : "scratch");
  const [templateId, setTemplateId] = useState<number | null>(metric ? metric.template_id : (initialTemplate?.id ?? null));
  const [draft, setDraft] = useState<DefinitionDraft>(metric ? draftFrom(metric) : initialTemplate ? draftFrom(initialTemplate) : emptyDraft);
  const [dependencies, setDependencies] = useState<DependencyDraft>(() => dependencyDraftFrom(metric));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const candidates = metrics.filter((m) => m.id !== metric?.id);
  const template = templates.find((t) => t.id === templateId);

  function chooseSource(next: Source) {
    setSource(next);
    setErrors({});
    if (next === "scratch") {
      setTemplateId(null);
      setDraft(emptyDraft);
    }
  }

  function chooseTemplate(id: number) {
    const t = templates.find((x) => x.id === id);
    setTemplateId(t?.id ?? null);
    setDraft(t ? draftFrom(t) : emptyDraft);
    setErrors({});
  }

  const save = useMutation({
    mutationFn: async (body: NonNullable<ReturnType<typeof draftToBody>["body"]> & DependencyBody) => {
      if (metric) {
        return (await apiFetch<Metric>(`/evaluation-pipeline-nodes/${metric.id}`, { method: "PATCH", json: body })).data;
      }
      const json = { dataset_id: datasetId, ...(source === "template" && templateId ? { template_id: templateId } : {}), ...body };
      return (await apiFetch<Metric>("/evaluation-pipeline-nodes", { method: "POST", json })).data;
    },
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ["metrics", datasetId] });
      router.push(`/datasets/${datasetId}`);
      router.refresh();
    },
    onError: (error) => setErrors(apiErrorFields(error).fields),
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    const { body, errors: definitionErrors } = draftToBody(draft);
    const { body: dependencyBody, errors: dependencyErrors } = dependencyDraftToBody(dependencies);
    const found = { ...definitionErrors, ...dependencyErrors };
    if (source === "template" && !metric && !templateId) found.template = "Choose a template, or start from scratch";
    setErrors(found);
    if (body && dependencyBody && !found.template) save.mutate({ ...body, ...dependencyBody });
  }

  const check = checkPromptVariables(draft.prompt, draft.evaluation_level, draft.output_type);
  const previewBlocked = draft.kind === "check"
    ? "A check calls no judge: there is no prompt to preview. Run it from the grid."
    : !draft.prompt.trim()
    ? "Write a prompt to preview it."
    : check.invalid.length
      ? "Fix the variables that are not valid at this level to preview."
      : null;
  const parsedSchema = draft.output_type === "json" ? draftToBody({ ...draft, name: draft.name || "x" }).body?.output_schema ?? null : null;
  const general = save.error ? apiErrorFields(save.error).general : null;

  return (
    <div className="grid items-start gap-6 lg:grid-cols-[minmax(0,1fr)_30rem]">
      <Card>
        <CardHeader
          title={metric ? "Edit metric" : "New metric"}
          description={
            metric
              ? "Changes apply to future evaluations; results already computed are kept."
              : "A metric is a column of the dataset's grid: a judge prompt applied to every conversation, message or step."
          }
        />
        <form onSubmit={submit} noValidate aria-label={metric ? "Edit metric" : "Create metric"} className="space-y-5 px-5 py-4">
          {!metric ? (
            <fieldset className="space-y-2">
              <legend className="text-sm font-medium text-slate-700">Start from</legend>
              <div className="flex gap-4 text-sm">
                {(["template", "scratch"] as const).map((s) => (
                  <label key={s} className="flex items-center gap-2">
                    <input type="radio" name="source" value={s} checked={source === s} onChange={() => chooseSource(s)} />
                    {s === "template" ? "A template" : "Scratch"}
                  </label>
                ))}
              </div>
            </fieldset>
          ) : null}
          {source === "template" && !metric ? (
            <Field id="metric-template" label="Template" error={errors.template} hint="Its fields are copied; change them below before saving.">
              <Select id="metric-template" value={templateId ?? ""} aria-invalid={!!errors.template} onChange={(e) => chooseTemplate(Number(e.target.value))}>
                <option value="" disabled>
                  Choose a template…
                </option>
                {levels.map((level) => (
                  <optgroup key={level} label={`${levelLabels[level]} level`}>
                    {templates
                      .filter((t) => t.evaluation_level === level)
                      .map((t) => (
                        <option key={t.id} value={t.id}>
                          {t.name}
                          {t.is_system ? "" : " (mine)"}
                        </option>
                      ))}
                  </optgroup>
                ))}
              </Select>
            </Field>
          ) : null}
          {template && !metric ? <p className="-mt-2 text-sm text-slate-500">{template.description}</p> : null}
          {metric && template ? (
            <p className="text-sm text-slate-500">Copied from the template “{template.name}”.</p>
          ) : null}

          {source === "scratch" || templateId || metric ? (
            <DefinitionFields idPrefix="metric" draft={draft} errors={errors} onChange={(patch) => setDraft((d) => ({ ...d, ...patch }))} />
          ) : null}
          {source === "scratch" || templateId || metric ? (
            <DependencyFields
              idPrefix="metric"
              draft={dependencies}
              errors={errors}
              candidates={candidates}
              onChange={(patch) => setDependencies((d) => ({ ...d, ...patch }))}
            />
          ) : null}

          {general ? (
            <p role="alert" className="text-sm text-red-600">
              {general}
            </p>
          ) : null}
          <div className="flex items-center justify-end gap-3 border-t border-slate-100 pt-4">
            <Link href={`/datasets/${datasetId}`} className="text-sm text-slate-600 hover:text-slate-900">
              Cancel
            </Link>
            <Button needs="annotator" type="submit" disabled={save.isPending || check.invalid.length > 0}>
              {save.isPending ? "Saving…" : metric ? "Save changes" : "Add metric"}
            </Button>
          </div>
        </form>
      </Card>
      <PreviewPanel
        datasetId={datasetId}
        level={draft.evaluation_level}
        prompt={draft.prompt}
        outputType={draft.output_type}
        outputSchema={parsedSchema}
        disabledReason={previewBlocked}
        modelName={metric?.model_name ?? null}
      />
    </div>
  );
}
