"use client";

import Link from "next/link";
import { useCallback } from "react";
import { Button } from "@/components/ui/button";
import { JsonView } from "@/components/ui/json-view";
import { Popover } from "@/components/ui/popover";
import { formatDateTime, formatDuration, reasoningOf, valueOf } from "@/components/results/format";
import { ResultValue } from "@/components/results/result-value";
import type { GridRow } from "@/lib/schemas/executions";
import type { Metric } from "@/lib/schemas/metrics";
import { useGridActions } from "./grid-context";
import { levelNames, outputTypeNames } from "./labels";
import { useLiveCell, viewOf } from "./live-store";
import { cellKey } from "./types";

/** A cell's full result: the value, the judge's reasoning, the whole object for JSON, and where it came from. */
export function CellDetail({ anchor, metric, row, onClose }: { anchor: HTMLElement; metric: Metric; row: GridRow; onClose: () => void }) {
  const actions = useGridActions();
  const live = useLiveCell(actions.store, cellKey(metric.id, row.entity_type, row.entity_id));
  const view = viewOf(live, row.cells[String(metric.id)]);
  const close = useCallback(() => onClose(), [onClose]);

  return (
    <Popover anchor={anchor} onClose={close} label={`${metric.name} result`} className="w-[26rem] max-w-[calc(100vw-1rem)]">
      <div className="border-b border-slate-100 px-4 py-3" data-testid="cell-detail">
        <p className="text-sm font-semibold text-slate-900">{metric.name}</p>
        <p className="mt-0.5 truncate text-xs text-slate-500" title={row.label}>
          {levelNames[row.entity_type]} · {row.label}
        </p>
      </div>
      <div className="max-h-[60vh] space-y-3 overflow-y-auto px-4 py-3 text-sm">
        {view.status === "completed" || view.status === "failed" ? (
          <>
            {view.status === "failed" ? (
              <p className="rounded-md bg-red-50 px-3 py-2 text-red-800 ring-1 ring-inset ring-red-200">{view.error ?? "failed"}</p>
            ) : (
              <FullValue metric={metric} result={view.result} />
            )}
            {reasoningOf(view.result) ? (
              <section>
                <h3 className="text-xs font-semibold uppercase tracking-wide text-slate-500">Reasoning</h3>
                <p className="mt-1 whitespace-pre-wrap break-words text-slate-700" data-testid="cell-reasoning">
                  {reasoningOf(view.result)}
                </p>
              </section>
            ) : null}
            <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-xs text-slate-500">
              <dt>Output</dt>
              <dd className="text-slate-700">{outputTypeNames[metric.output_type]}</dd>
              {view.detail ? (
                <>
                  <dt>Model</dt>
                  <dd className="text-slate-700">{view.detail.model_name ?? "—"}</dd>
                  <dt>Tokens</dt>
                  <dd className="tabular-nums text-slate-700">
                    {view.detail.input_tokens} in · {view.detail.output_tokens} out{view.detail.cached ? " · cached" : ""}
                  </dd>
                  <dt>Time</dt>
                  <dd className="text-slate-700">{formatDuration(view.detail.execution_time)}</dd>
                </>
              ) : null}
              <dt>Judged</dt>
              <dd className="text-slate-700">{formatDateTime(view.updatedAt)}</dd>
              <dt>Run</dt>
              <dd>
                <Link href={`/executions/${view.executionId}`} className="text-brand-700 hover:underline">
                  Execution #{view.executionId}
                </Link>
              </dd>
            </dl>
          </>
        ) : (
          <p className="text-slate-500">{view.status === "empty" ? "Not evaluated yet." : "Being evaluated…"}</p>
        )}
      </div>
      <div className="flex justify-end gap-2 border-t border-slate-100 px-4 py-2.5">
        <Button variant="ghost" size="sm" onClick={close}>
          Close
        </Button>
        <Button
          needs="annotator"
          size="sm"
          onClick={() => {
            // Asking again on purpose: a cached verdict would only repeat the same answer.
            actions.runCell(metric, row, { fresh: true });
            close();
          }}
        >
          Run again
        </Button>
      </div>
    </Popover>
  );
}

function FullValue({ metric, result }: { metric: Metric; result: unknown }) {
  if (metric.output_type === "text") {
    const value = valueOf(result);
    return (
      <p className="whitespace-pre-wrap break-words rounded-md bg-slate-50 px-3 py-2 text-slate-800 ring-1 ring-inset ring-slate-200" data-testid="cell-full-text">
        {typeof value === "string" ? value : JSON.stringify(result)}
      </p>
    );
  }
  if (metric.output_type === "json") {
    return (
      <div className="space-y-2">
        <div className="h-6">
          <ResultValue type="json" result={result} />
        </div>
        <JsonView value={result} label="Judge's answer" />
      </div>
    );
  }
  return (
    <div className="flex h-7 items-center">
      <ResultValue type={metric.output_type} result={result} />
    </div>
  );
}
