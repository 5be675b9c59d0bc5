"use client";

import { useState } from "react";
import type { GridView } from "@/components/grid/use-grid-data";
import { Button } from "@/components/ui/button";
import type { Metric } from "@/lib/schemas/metrics";

const inputClass =
  "h-8 rounded-md border border-slate-300 bg-white px-2 font-mono text-xs shadow-sm focus:border-brand-500 focus:outline-none focus:ring-2 focus:ring-brand-100";

/**
 * Meta columns, filter and sort of the grid's conversation rows, in the grid endpoint's own syntax
 * (`meta=reward`, `filter=meta.reward==0;metric.12==pass`, `sort=-meta.reward`), applied on submit.
 */
export function GridViewBar({ view, onApply, metrics }: { view: GridView; onApply: (v: GridView) => void; metrics: Metric[] }) {
  const [draft, setDraft] = useState(view);
  const conversationMetrics = metrics.filter((m) => m.evaluation_level === "conversation");
  return (
    <form
      className="flex flex-wrap items-center gap-2 text-xs text-slate-600"
      aria-label="Grid view"
      onSubmit={(e) => {
        e.preventDefault();
        onApply({ meta: draft.meta.trim(), filter: draft.filter.trim(), sort: draft.sort.trim() });
      }}
    >
      <label className="flex items-center gap-1">
        Meta columns
        <input className={`${inputClass} w-40`} value={draft.meta} onChange={(e) => setDraft({ ...draft, meta: e.target.value })} placeholder="reward,task.kind" aria-label="Meta columns" />
      </label>
      <label className="flex items-center gap-1">
        Filter
        <input
          className={`${inputClass} w-72`}
          value={draft.filter}
          onChange={(e) => setDraft({ ...draft, filter: e.target.value })}
          placeholder={`meta.reward==0${conversationMetrics[0] ? `;metric.${conversationMetrics[0].id}==pass` : ""}`}
          aria-label="Filter rows"
        />
      </label>
      <label className="flex items-center gap-1">
        Sort
        <input className={`${inputClass} w-36`} value={draft.sort} onChange={(e) => setDraft({ ...draft, sort: e.target.value })} placeholder="-meta.reward" aria-label="Sort rows" />
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
            onApply({ meta: "", filter: "", sort: "" });
          }}
        >
          Clear
        </Button>
      ) : null}
      {conversationMetrics.length ? (
        <span className="text-slate-400">{conversationMetrics.map((m) => `metric.${m.id} = ${m.name}`).join(" · ")}</span>
      ) : null}
    </form>
  );
}
