"use client";

import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Button } from "@/components/ui/button";
import { apiFetch } from "@/lib/client/api";
import { checkPromptVariables } from "@/lib/metrics/variables";
import type { MetricTemplate } from "@/lib/schemas/metrics";
import { apiErrorFields, DefinitionFields, draftFrom, draftToBody, emptyDraft, type DefinitionDraft } from "./definition-fields";

/** Create one of my templates, or edit one (PATCH); system templates never reach this form. */
export function TemplateForm({
  template,
  onSaved,
  onCancel,
}: {
  template?: MetricTemplate;
  onSaved: (saved: MetricTemplate) => void;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState<DefinitionDraft>(template ? draftFrom(template) : emptyDraft);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const save = useMutation({
    mutationFn: async (body: Record<string, unknown>) =>
      template
        ? (await apiFetch<MetricTemplate>(`/metric-templates/${template.id}`, { method: "PATCH", json: body })).data
        : (await apiFetch<MetricTemplate>("/metric-templates", { method: "POST", json: body })).data,
    onSuccess: onSaved,
    onError: (error) => setErrors(apiErrorFields(error).fields),
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    const { body, errors: found } = draftToBody(draft);
    setErrors(found);
    if (!body) return;
    // Templates carry a category; the judge model is chosen per metric.
    const { model_name: _model, ...rest } = body;
    save.mutate({ ...rest, category: draft.category.trim() ? draft.category.trim() : null });
  }

  const invalid = checkPromptVariables(draft.prompt, draft.evaluation_level, draft.output_type).invalid.length > 0;
  const general = save.error ? apiErrorFields(save.error).general : null;
  const idPrefix = template ? `template-${template.id}` : "template-new";

  return (
    <form onSubmit={submit} noValidate aria-label={template ? `Edit template ${template.name}` : "New template"} className="space-y-4">
      <DefinitionFields idPrefix={idPrefix} draft={draft} errors={errors} showCategory onChange={(patch) => setDraft((d) => ({ ...d, ...patch }))} />
      {general ? (
        <p role="alert" className="text-sm text-red-600">
          {general}
        </p>
      ) : null}
      <div className="flex justify-end gap-2">
        <Button variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
        <Button needs="annotator" type="submit" disabled={save.isPending || invalid}>
          {save.isPending ? "Saving…" : template ? "Save template" : "Create template"}
        </Button>
      </div>
    </form>
  );
}
