"use client";

import { Field, Input, Textarea } from "@/components/ui/field";
import { Select } from "@/components/ui/select";
import type { EvaluationLevel, MetricKind, OutputType, StepKind } from "@/lib/vocabulary";
import { checks } from "@/lib/checks";
import { ApiError } from "@/lib/client/api";
import type { Metric, MetricTemplate } from "@/lib/schemas/metrics";
import { levelHints, levelLabels, levels, outputTypeLabels, outputTypeList } from "./labels";
import { PromptEditor } from "./prompt-editor";

/** The editable form of a template or metric definition; every field is text until it is sent. */
export type DefinitionDraft = {
  name: string;
  description: string;
  evaluation_level: EvaluationLevel;
  output_type: OutputType;
  output_schema: string;
  model_name: string;
  prompt: string;
  category: string;
  kind: MetricKind;
  check_type: string;
  /** The check's parameters as JSON text. */
  check_params: string;
  /** Step level: the step kinds judged; empty judges every step. */
  applies_to: StepKind[];
};

const stepKindList: StepKind[] = ["thinking", "tool_call", "tool_result", "output"];

export const emptyDraft: DefinitionDraft = {
  name: "",
  description: "",
  evaluation_level: "message",
  output_type: "progress",
  output_schema: "",
  model_name: "",
  prompt: "",
  category: "",
  kind: "llm",
  check_type: "",
  check_params: "{}",
  applies_to: [],
};

export function draftFrom(source: MetricTemplate | Metric): DefinitionDraft {
  return {
    name: source.name,
    description: source.description ?? "",
    evaluation_level: source.evaluation_level,
    output_type: source.output_type,
    output_schema: source.output_schema ? JSON.stringify(source.output_schema, null, 2) : "",
    model_name: source.model_name ?? "",
    prompt: source.prompt,
    category: "category" in source ? (source.category ?? "") : "",
    kind: source.kind,
    check_type: source.check?.type ?? "",
    check_params: JSON.stringify(source.check?.params ?? {}, null, 2),
    applies_to: source.applies_to ?? [],
  };
}

export type DraftBody = {
  name: string;
  description: string | null;
  evaluation_level: EvaluationLevel;
  output_type: OutputType;
  output_schema: Record<string, unknown> | null;
  model_name: string | null;
  prompt?: string;
  kind: MetricKind;
  check?: { type: string; params: Record<string, unknown> };
  applies_to: StepKind[] | null;
};

/** The request body for a draft, or field errors found before sending (empty fields, bad JSON). */
export function draftToBody(draft: DefinitionDraft): { body?: DraftBody; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  if (!draft.name.trim()) errors.name = "Give it a name";
  const isCheck = draft.kind === "check";
  if (!isCheck && !draft.prompt.trim()) errors.prompt = "Write the prompt the judge follows";
  let params: Record<string, unknown> = {};
  if (isCheck) {
    if (!draft.check_type) errors["check.type"] = "Choose a check";
    try {
      const parsed: unknown = JSON.parse(draft.check_params || "{}");
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) errors["check.params"] = "Give the parameters as a JSON object";
      else params = parsed as Record<string, unknown>;
    } catch (e) {
      errors["check.params"] = `Not valid JSON: ${(e as Error).message}`;
    }
  }
  let schema: Record<string, unknown> | null = null;
  if (draft.output_type === "json") {
    try {
      const parsed: unknown = JSON.parse(draft.output_schema || "null");
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
        errors.output_schema = 'Give a JSON Schema object, e.g. {"type": "object", "properties": {...}}';
      } else {
        schema = parsed as Record<string, unknown>;
      }
    } catch (e) {
      errors.output_schema = `Not valid JSON: ${(e as Error).message}`;
    }
  }
  if (Object.keys(errors).length) return { errors };
  return {
    errors,
    body: {
      name: draft.name.trim(),
      description: draft.description.trim() ? draft.description : null,
      evaluation_level: draft.evaluation_level,
      output_type: isCheck ? "checkbox" : draft.output_type,
      output_schema: isCheck ? null : schema,
      model_name: draft.model_name.trim() ? draft.model_name.trim() : null,
      // A check has no prompt: the server validates its parameters instead (422 with the reason).
      ...(isCheck ? { check: { type: draft.check_type, params } } : { prompt: draft.prompt }),
      kind: draft.kind,
      applies_to: draft.evaluation_level === "step" && draft.applies_to.length ? draft.applies_to : null,
    },
  };
}

/** Field errors of an API error, keyed by field path; the rest becomes one general message. */
export function apiErrorFields(error: unknown): { fields: Record<string, string>; general: string | null } {
  if (!(error instanceof ApiError)) return { fields: {}, general: error instanceof Error ? error.message : null };
  if (error.status === 422 && error.details.every((d) => d.path === "prompt")) {
    // The editor already lists the bad variables; the message adds the valid ones.
    return { fields: { prompt: error.message }, general: null };
  }
  const fields: Record<string, string> = {};
  for (const d of error.details) {
    // Errors inside the parameters show under the parameters field, naming the parameter.
    const path = d.path.startsWith("check.params") ? "check.params" : d.path;
    fields[path] ??= path === d.path ? d.message : `${d.path.slice("check.params.".length)} ${d.message}`;
  }
  return { fields, general: error.details.length ? null : error.message };
}

/** Name, description, level, output type (and schema), model, category and the prompt editor. */
export function DefinitionFields({
  idPrefix,
  draft,
  onChange,
  errors,
  showCategory = false,
}: {
  idPrefix: string;
  draft: DefinitionDraft;
  onChange: (patch: Partial<DefinitionDraft>) => void;
  errors: Record<string, string>;
  showCategory?: boolean;
}) {
  const id = (field: string) => `${idPrefix}-${field}`;
  return (
    <div className="space-y-4">
      <div className="grid gap-4 sm:grid-cols-2">
        <Field id={id("name")} label="Name" error={errors.name}>
          <Input
            id={id("name")}
            value={draft.name}
            maxLength={200}
            aria-invalid={!!errors.name}
            onChange={(e) => onChange({ name: e.target.value })}
          />
        </Field>
        {showCategory ? (
          <Field id={id("category")} label="Category" hint="Optional, e.g. Safety" error={errors.category}>
            <Input id={id("category")} value={draft.category} maxLength={100} onChange={(e) => onChange({ category: e.target.value })} />
          </Field>
        ) : (
          <Field id={id("model")} label="Judge model" hint="Optional; empty uses the server's default" error={errors.model_name}>
            <Input id={id("model")} value={draft.model_name} maxLength={200} placeholder="gpt-4o-mini" onChange={(e) => onChange({ model_name: e.target.value })} />
          </Field>
        )}
      </div>
      <fieldset className="space-y-1.5">
        <legend className="text-sm font-medium text-slate-700">Kind</legend>
        <div className="flex gap-4 text-sm">
          {(["llm", "check"] as const).map((k) => (
            <label key={k} className="flex items-center gap-2">
              <input type="radio" name={id("kind")} value={k} checked={draft.kind === k} onChange={() => onChange({ kind: k })} />
              {k === "llm" ? "LLM judge" : "Deterministic check (no judge call)"}
            </label>
          ))}
        </div>
      </fieldset>
      <Field id={id("description")} label="Description" hint="Optional: what it measures, in a user's words" error={errors.description}>
        <Textarea id={id("description")} value={draft.description} rows={2} maxLength={5000} onChange={(e) => onChange({ description: e.target.value })} />
      </Field>
      <div className="grid gap-4 sm:grid-cols-2">
        <Field id={id("level")} label="Evaluation level" hint={levelHints[draft.evaluation_level]} error={errors.evaluation_level}>
          <Select
            id={id("level")}
            value={draft.evaluation_level}
            onChange={(e) => onChange({ evaluation_level: e.target.value as EvaluationLevel })}
          >
            {levels.map((l) => (
              <option key={l} value={l}>
                {levelLabels[l]}
              </option>
            ))}
          </Select>
        </Field>
        {draft.kind === "check" ? (
          <Field id={id("check-type")} label="Check" hint={checks.find((c) => c.type === draft.check_type)?.description} error={errors["check.type"]}>
            <Select id={id("check-type")} value={draft.check_type} aria-invalid={!!errors["check.type"]} onChange={(e) => onChange({ check_type: e.target.value })}>
              <option value="" disabled>
                Choose a check…
              </option>
              {checks.map((c) => (
                <option key={c.type} value={c.type}>
                  {c.label}
                </option>
              ))}
            </Select>
          </Field>
        ) : (
          <Field id={id("output")} label="Output type" error={errors.output_type}>
            <Select id={id("output")} value={draft.output_type} onChange={(e) => onChange({ output_type: e.target.value as OutputType })}>
              {outputTypeList.map((t) => (
                <option key={t} value={t}>
                  {outputTypeLabels[t]}
                </option>
              ))}
            </Select>
          </Field>
        )}
      </div>
      {draft.evaluation_level === "step" ? (
        <fieldset className="space-y-1.5">
          <legend className="text-sm font-medium text-slate-700">Applies to</legend>
          <p className="text-xs text-slate-500">Step kinds the metric judges; other steps show n/a and cost nothing. None checked: every step.</p>
          <div className="flex flex-wrap gap-4 text-sm" id={id("applies-to")}>
            {stepKindList.map((k) => (
              <label key={k} className="flex items-center gap-2">
                <input
                  type="checkbox"
                  checked={draft.applies_to.includes(k)}
                  onChange={(e) => onChange({ applies_to: e.target.checked ? [...draft.applies_to, k] : draft.applies_to.filter((x) => x !== k) })}
                />
                {k}
              </label>
            ))}
          </div>
          {errors.applies_to ? <p className="text-sm text-red-600">{errors.applies_to}</p> : null}
        </fieldset>
      ) : null}
      {draft.kind === "check" ? (
        <Field id={id("check-params")} label="Check parameters (JSON)" hint="Validated on save" error={errors["check.params"]}>
          <Textarea
            id={id("check-params")}
            value={draft.check_params}
            rows={5}
            spellCheck={false}
            className="font-mono text-[13px]"
            aria-invalid={!!errors["check.params"]}
            onChange={(e) => onChange({ check_params: e.target.value })}
          />
        </Field>
      ) : null}
      {draft.kind !== "check" && draft.output_type === "json" ? (
        <Field
          id={id("schema")}
          label="Output schema (JSON Schema)"
          hint='An object schema; a numeric "score" property becomes the metric score'
          error={errors.output_schema}
        >
          <Textarea
            id={id("schema")}
            value={draft.output_schema}
            rows={6}
            spellCheck={false}
            className="font-mono text-[13px]"
            aria-invalid={!!errors.output_schema}
            placeholder={'{"type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"]}'}
            onChange={(e) => onChange({ output_schema: e.target.value })}
          />
        </Field>
      ) : null}
      {draft.kind === "check" ? null : (
        <div className="space-y-1.5">
          <label htmlFor={id("prompt")} className="block text-sm font-medium text-slate-700">
            Prompt
          </label>
          <PromptEditor
            id={id("prompt")}
            value={draft.prompt}
            level={draft.evaluation_level}
            outputType={draft.output_type}
            error={errors.prompt}
            onChange={(prompt) => onChange({ prompt })}
          />
        </div>
      )}
    </div>
  );
}
