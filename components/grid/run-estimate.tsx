"use client";

import { useState } from "react";
import { Button } from "@/components/ui/button";
import type { RunEstimate } from "@/lib/schemas/executions";

/** Runs above this many cells are priced (dry run) and confirmed before they start. */
export const CONFIRM_ABOVE_CELLS = 100;

export function formatUsd(usd: number): string {
  return usd >= 1 ? `$${usd.toFixed(2)}` : usd === 0 ? "$0" : `$${usd.toPrecision(2)}`;
}

/** The estimate of a large run, shown before it starts: cells, judge calls, cache hits, tokens and cost; an optional budget. */
export function RunEstimateConfirm({
  label,
  estimate,
  onStart,
  onCancel,
}: {
  label: string;
  estimate: RunEstimate;
  onStart: (maxCostUsd: number | null) => void;
  onCancel: () => void;
}) {
  const [budget, setBudget] = useState("");
  const budgetValue = budget.trim() === "" ? null : Number(budget);
  const budgetInvalid = budgetValue !== null && !(Number.isFinite(budgetValue) && budgetValue > 0);
  const figures: Array<[string, string]> = [
    ["Cells", estimate.cells.toLocaleString()],
    ["Judge calls", estimate.judge_calls.toLocaleString()],
    ["of which goal extractions (@GOAL)", estimate.goal_extractions.toLocaleString()],
    ["From the cache", estimate.cached.toLocaleString()],
    ["Checks", estimate.checks.toLocaleString()],
    ["Tokens (in / out)", `${estimate.estimated_input_tokens.toLocaleString()} / ${estimate.estimated_output_tokens.toLocaleString()}`],
    ["Estimated cost", estimate.estimated_cost_usd === null ? "no price for the model (JUDGE_PRICES)" : formatUsd(estimate.estimated_cost_usd)],
  ];
  return (
    <div role="dialog" aria-modal="false" aria-labelledby="run-estimate-title" className="rounded-lg border border-amber-300 bg-amber-50 px-4 py-3 text-sm shadow-sm">
      <p id="run-estimate-title" className="font-medium text-slate-900">
        Start this run? <span className="font-normal text-slate-600">{label}</span>
      </p>
      <dl className="mt-2 grid grid-cols-2 gap-x-6 gap-y-1 sm:grid-cols-3">
        {figures.map(([name, value]) => (
          <div key={name} className="flex gap-2">
            <dt className="text-slate-500">{name}</dt>
            <dd className="font-medium tabular-nums text-slate-900" data-figure={name}>
              {value}
            </dd>
          </div>
        ))}
      </dl>
      <div className="mt-3 flex flex-wrap items-end gap-3">
        <label className="text-xs font-medium text-slate-600">
          Stop at (USD, optional)
          <input
            type="number"
            min={0}
            step="any"
            value={budget}
            onChange={(e) => setBudget(e.target.value)}
            aria-invalid={budgetInvalid}
            className="ml-2 h-8 w-28 rounded-md border border-slate-300 bg-white px-2 text-sm aria-[invalid=true]:border-red-500"
          />
        </label>
        <Button needs="annotator" size="sm" onClick={() => onStart(budgetValue)} disabled={budgetInvalid}>
          Start run
        </Button>
        <Button size="sm" variant="ghost" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </div>
  );
}
