"use client";

import Link from "next/link";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { ExecutionStatusBadge } from "@/components/executions/status-badge";
import type { Metric } from "@/lib/schemas/metrics";
import { describeScope, type RunState } from "./use-runs";
import { isActiveStatus } from "@/lib/execution-status";

/** The runs started or followed on this page: live progress while they go, the outcome after. */
export function RunList({
  runs,
  metrics,
  onCancel,
  onDismiss,
}: {
  runs: RunState[];
  metrics: Metric[];
  onCancel: (id: number) => void;
  onDismiss: (id: number) => void;
}) {
  if (runs.length === 0) return null;
  return (
    <ul className="space-y-2" aria-label="Runs">
      {runs.map((run) => {
        const running = isActiveStatus(run.status);
        const e = run.execution;
        return (
          <li
            key={run.id}
            data-testid="run-status"
            data-status={run.status}
            className={cn(
              "flex flex-wrap items-center gap-x-4 gap-y-1 rounded-lg border px-4 py-2 text-sm shadow-sm",
              running ? "border-brand-100 bg-white" : run.status === "completed" ? "border-emerald-200 bg-emerald-50/60" : "border-amber-200 bg-amber-50/60",
            )}
          >
            <span className="font-medium text-slate-900">Run #{run.id}</span>
            <span className="text-slate-600">{run.label ?? describeScope(e, metrics)}</span>
            <ExecutionStatusBadge status={run.status} />
            {running ? (
              <span className="flex min-w-48 flex-1 items-center gap-2" role="progressbar" aria-label={`Run #${run.id} progress`} aria-valuenow={run.progress} aria-valuemin={0} aria-valuemax={100}>
                <span className="h-2 flex-1 overflow-hidden rounded-full bg-slate-200">
                  <span className="block h-full rounded-full bg-brand-500 transition-[width] duration-300" style={{ width: `${run.progress}%` }} />
                </span>
                <span className="w-28 text-right text-xs tabular-nums text-slate-600">
                  {run.progress}% · {run.finished}/{run.total || "?"}
                </span>
                {run.concurrencyLimit != null ? (
                  <span
                    data-testid="run-limiter"
                    className={cn("text-xs tabular-nums", run.rateLimits ? "text-amber-800" : "text-slate-500")}
                    title="The judge model's adaptive limit of calls in flight (it shrinks when the provider answers 429, rate limited), and how many such answers this run has met"
                  >
                    up to {run.concurrencyLimit} calls at once · {rateLimited(run.rateLimits ?? 0)}
                  </span>
                ) : null}
              </span>
            ) : (
              <span role="status" className="flex-1 text-slate-700">
                {e.successful_evaluations} succeeded, {e.failed_evaluations} failed
                {e.skipped_evaluations ? `, ${e.skipped_evaluations} skipped` : ""} of {e.total_evaluations}
                {e.meta.rate_limits ? ` · ${rateLimited(e.meta.rate_limits)}` : ""}
                {run.status === "cancelled" ? " — cancelled; finished results are kept" : ""}
              </span>
            )}
            {run.queued ? <span className="text-xs text-slate-500">waiting for a connection to follow live…</span> : null}
            {run.streamError ? <span className="text-xs text-amber-800">{run.streamError}</span> : null}
            <span className="ml-auto flex items-center gap-1">
              <Link href={`/executions/${run.id}`} className="rounded px-2 py-1 text-sm font-medium text-brand-700 hover:bg-brand-50">
                {running ? "Details" : "Results"}
              </Link>
              {running ? (
                <Button needs="annotator" variant="secondary" size="sm" onClick={() => onCancel(run.id)}>
                  Cancel
                </Button>
              ) : (
                <button
                  type="button"
                  className="rounded px-2 py-1 text-slate-500 hover:bg-slate-200 hover:text-slate-900"
                  aria-label={`Dismiss run #${run.id}`}
                  onClick={() => onDismiss(run.id)}
                >
                  ✕
                </button>
              )}
            </span>
          </li>
        );
      })}
    </ul>
  );
}

/** "3 rate-limited answers": the judge provider's 429s, said in words. */
function rateLimited(n: number): string {
  return `${n} rate-limited ${n === 1 ? "answer" : "answers"}`;
}
