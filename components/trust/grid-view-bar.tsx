"use client";

import { useState } from "react";
import type { GridView } from "@/components/grid/use-grid-data";
import { Button } from "@/components/ui/button";
import { ApiError } from "@/lib/client/api";
import type { Metric } from "@/lib/schemas/metrics";

const fieldNames: Partial<Record<keyof GridView, string>> = { meta: "Meta columns", filter: "Filter", sort: "Sort" };

const inputClass =
  "h-8 rounded-md border border-slate-300 bg-white px-2 font-mono text-xs shadow-sm focus:border-brand-500 focus:outline-none focus:ring-2 focus:ring-brand-100";

/**
 * Meta columns, filter and sort of the grid's conversation rows, in the grid endpoint's own syntax
 * (`meta=reward`, `filter=meta.reward==0;metric.12==pass`, `sort=-meta.reward`), applied on submit.
 */
export function GridViewBar({
  view,
  onApply,
  metrics,
  error = null,
  onDismissError,
}: {
  view: GridView;
  onApply: (v: GridView) => void | Promise<void>;
  metrics: Metric[];
  /** The API's refusal of the last view applied; the grid keeps showing `view`. */
  error?: Error | null;
  onDismissError?: () => void;
}) {
  const [draft, setDraft] = useState(view);
  const details = error instanceof ApiError ? error.details : [];
  const invalid = (field: keyof GridView) => details.some((d) => d.path === field || d.path.startsWith(`${field}.`) || d.path.startsWith(`${field}[`));
  const errorText = details.length ? details.map((d) => `${fieldNames[d.path as keyof GridView] ?? d.path}: ${d.message}`).join(" · ") : error?.message;
  const conversationMetrics = metrics.filter((m) => m.evaluation_level === "conversation");
  return (
    <form
      className="flex flex-wrap items-center gap-2 text-xs text-slate-600"
      aria-label="Grid view"
      onSubmit={(e) => {
        e.preventDefault();
        void onApply({ meta: draft.meta.trim(), filter: draft.filter.trim(), sort: draft.sort.trim() });
      }}
    >
      <label className="flex items-center gap-1">
        Meta columns
        <input className={`${inputClass} w-40`} aria-invalid={invalid("meta") || undefined} value={draft.meta} onChange={(e) => setDraft({ ...draft, meta: e.target.value })} placeholder="reward,task.kind" aria-label="Meta columns" />
      </label>
      <label className="flex items-center gap-1">
        Filter
        <input
          className={`${inputClass} w-72`}
          aria-invalid={invalid("filter") || undefined}
          value={draft.filter}
          onChange={(e) => setDraft({ ...draft, filter: e.target.value })}
          placeholder={`meta.reward==0${conversationMetrics[0] ? `;metric.${conversationMetrics[0].id}==pass` : ""}`}
          aria-label="Filter rows"
        />
      </label>
      <label className="flex items-center gap-1">
        Sort
        <input className={`${inputClass} w-36`} aria-invalid={invalid("sort") || undefined} value={draft.sort} onChange={(e) => setDraft({ ...draft, sort: e.target.value })} placeholder="-meta.reward" aria-label="Sort rows" />
      </label>
      <Button type="submit" size="sm" variant="secondary">
        Apply
      </Button>
      {view.meta || view.filter || view.sort ? (
        <Button
          size="sm"
          variant="ghost"
          onClick={() => {
            setDraft({ meta: "", filter: "", sort: "" });
            void onApply({ meta: "", filter: "", sort: "" });
          }}
        >
          Clear
        </Button>
      ) : null}
      {conversationMetrics.length ? (
        <span className="text-slate-400">{conversationMetrics.map((m) => `metric.${m.id} = ${m.name}`).join(" · ")}</span>
      ) : null}
      {error ? (
        <p role="alert" data-testid="grid-view-error" className="flex w-full items-start gap-2 rounded-md border border-red-200 bg-red-50 px-3 py-1.5 text-red-800">
          <span className="flex-1">
            Not applied — {errorText}. The grid still shows {view.meta || view.filter || view.sort ? "the view before" : "every conversation"}.
          </span>
          {onDismissError ? (
            <button type="button" onClick={onDismissError} aria-label="Dismiss error" title="Dismiss error" className="rounded px-1.5 text-red-700 hover:bg-red-100">
              ✕
            </button>
          ) : null}
        </p>
      ) : null}
    </form>
  );
}
