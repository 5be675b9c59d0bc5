"use client";

import { Field, Input } from "@/components/ui/field";
import { Select } from "@/components/ui/select";
import type { Metric } from "@/lib/schemas/metrics";

/** The metric form's dependency fields as edited: ids checked, skip rule, threshold as typed. */
export type DependencyDraft = {
  depends_on: number[];
  skip: "never" | "failed" | "below";
  threshold: string;
};

export type DependencyBody = {
  depends_on: number[];
  skip_rule: { when: "failed" } | { when: "below"; threshold: number } | null;
};

export function dependencyDraftFrom(metric?: Metric): DependencyDraft {
  const rule = metric?.skip_rule ?? null;
  return {
    depends_on: metric?.depends_on ?? [],
    skip: rule?.when ?? "never",
    threshold: rule?.when === "below" ? String(rule.threshold) : "0.5",
  };
}

/** The request fields for a draft, or field errors found before sending (keyed like the server's). */
export function dependencyDraftToBody(draft: DependencyDraft): { body?: DependencyBody; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  // A skip rule reads the dependencies' verdicts: without one it would never skip anything.
  if (draft.skip !== "never" && draft.depends_on.length === 0) errors.skip_rule = "Choose at least one dependency for a skip rule";
  let threshold = 0;
  if (draft.skip === "below") {
    threshold = Number(draft.threshold);
    if (!draft.threshold.trim() || !Number.isFinite(threshold)) errors["skip_rule.threshold"] = "Give the threshold as a number, e.g. 0.5";
  }
  if (Object.keys(errors).length) return { errors };
  const skip_rule = draft.skip === "never" ? null : draft.skip === "failed" ? { when: "failed" as const } : { when: "below" as const, threshold };
  return { errors, body: { depends_on: draft.depends_on, skip_rule } };
}

/** Pick the metrics this one depends on (other metrics of the dataset) and when its cells are skipped. */
export function DependencyFields({
  idPrefix,
  draft,
  onChange,
  errors,
  candidates,
}: {
  idPrefix: string;
  draft: DependencyDraft;
  onChange: (patch: Partial<DependencyDraft>) => void;
  errors: Record<string, string>;
  /** The dataset's other metrics (not the one edited). */
  candidates: Metric[];
}) {
  const id = (field: string) => `${idPrefix}-${field}`;
  const skipError = errors.skip_rule ?? errors["skip_rule.when"];
  return (
    <div className="space-y-4">
      <fieldset className="space-y-1.5" aria-describedby={errors.depends_on ? id("depends-on-error") : undefined}>
        <legend className="text-sm font-medium text-slate-700">Depends on</legend>
        <p className="text-xs text-slate-500">
          Metrics evaluated before this one in a run; their verdicts can be used in the prompt as @METRIC.&lt;name&gt; and by the skip rule.
        </p>
        {candidates.length === 0 ? (
          <p className="text-sm text-slate-500">The dataset has no other metric yet.</p>
        ) : (
          <div className="flex flex-wrap gap-x-4 gap-y-1 text-sm" id={id("depends-on")}>
            {candidates.map((m) => (
              <label key={m.id} className="flex items-center gap-2">
                <input
                  type="checkbox"
                  checked={draft.depends_on.includes(m.id)}
                  aria-invalid={!!errors.depends_on}
                  onChange={(e) =>
                    onChange({ depends_on: e.target.checked ? [...draft.depends_on, m.id] : draft.depends_on.filter((x) => x !== m.id) })
                  }
                />
                {m.name}
              </label>
            ))}
          </div>
        )}
        {errors.depends_on ? (
          <p id={id("depends-on-error")} role="alert" className="text-sm text-red-600">
            {errors.depends_on}
          </p>
        ) : null}
      </fieldset>
      <div className="grid gap-4 sm:grid-cols-2">
        <Field id={id("skip-rule")} label="Skip rule" hint="Skipped cells cost nothing and are reported as skipped, not failed" error={skipError}>
          <Select
            id={id("skip-rule")}
            value={draft.skip}
            aria-invalid={!!skipError}
            onChange={(e) => onChange({ skip: e.target.value as DependencyDraft["skip"] })}
          >
            <option value="never">Never skip</option>
            <option value="failed">Skip when a dependency failed</option>
            <option value="below">Skip when a dependency scored below…</option>
          </Select>
        </Field>
        {draft.skip === "below" ? (
          <Field id={id("skip-threshold")} label="Threshold" hint="Skip where a dependency's latest score is below this" error={errors["skip_rule.threshold"]}>
            <Input
              id={id("skip-threshold")}
              inputMode="decimal"
              value={draft.threshold}
              aria-invalid={!!errors["skip_rule.threshold"]}
              onChange={(e) => onChange({ threshold: e.target.value })}
            />
          </Field>
        ) : null}
      </div>
    </div>
  );
}
