"use client";

import Link from "next/link";
import { Menu, MenuItem, MenuSeparator, menuItemClass } from "@/components/ui/popover";
import { cn } from "@/components/ui/cn";
import type { Metric } from "@/lib/schemas/metrics";
import { levelNames, levelTones, outputTypeNames } from "./labels";

/** A metric column's header: name, level and output type, and the column's run menu. */
export function MetricHeader({
  metric,
  datasetId,
  onRunColumn,
}: {
  metric: Metric;
  datasetId: number;
  onRunColumn: (metric: Metric, retry: boolean) => void;
}) {
  return (
    <div className="flex h-full min-w-0 items-center gap-1 px-2" data-testid="metric-header">
      <div className="min-w-0 flex-1">
        <p className="truncate text-sm font-semibold normal-case tracking-normal text-slate-800" title={metric.description ?? metric.name}>
          {metric.name}
        </p>
        <p className="mt-0.5 flex items-center gap-1 text-[10px] font-medium normal-case tracking-normal">
          <span className={cn("rounded px-1 py-px ring-1 ring-inset", levelTones[metric.evaluation_level])}>{levelNames[metric.evaluation_level]}</span>
          <span className="rounded bg-slate-100 px-1 py-px text-slate-600 ring-1 ring-inset ring-slate-200">{outputTypeNames[metric.output_type]}</span>
        </p>
      </div>
      <Menu
        label={`${metric.name} column actions`}
        align="end"
        trigger={<span aria-hidden>⋯</span>}
        triggerClassName="inline-flex h-7 w-7 shrink-0 items-center justify-center rounded text-base text-slate-500 hover:bg-slate-200 hover:text-slate-900"
      >
        {(close) => (
          <>
            {metric.output_type === "pairwise" ? (
              // A pairwise metric judges two replies at once: a comparison runs it, never a run.
              <Link role="menuitem" href={`/datasets/${datasetId}/pairwise?metric=${metric.id}`} className={menuItemClass}>
                ⇄ Compare replies…
              </Link>
            ) : (
              <>
                <MenuItem
                  needs="annotator"
                  onSelect={() => {
                    close();
                    onRunColumn(metric, false);
                  }}
                >
                  ▶ Run column
                </MenuItem>
                <MenuItem
                  needs="annotator"
                  onSelect={() => {
                    close();
                    onRunColumn(metric, true);
                  }}
                >
                  ↻ Retry failed in column
                </MenuItem>
              </>
            )}
            <MenuSeparator />
            <Link role="menuitem" href={`/datasets/${datasetId}/metrics/${metric.id}`} className={menuItemClass}>
              Edit metric…
            </Link>
            <Link role="menuitem" href={`/datasets/${datasetId}/executions?metric=${metric.id}`} className={menuItemClass}>
              Runs of this metric
            </Link>
          </>
        )}
      </Menu>
    </div>
  );
}
