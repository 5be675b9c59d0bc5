"use client";

import Link from "next/link";
import { memo } from "react";
import { useAccess } from "@/components/caller-context";
import { cn } from "@/components/ui/cn";
import { metricAppliesToStep } from "@/lib/metrics/step-kinds";
import { ResultValue } from "@/components/results/result-value";
import type { GridRow } from "@/lib/schemas/executions";
import type { Metric } from "@/lib/schemas/metrics";
import { useGridActions } from "./grid-context";
import { useLiveCell, viewOf } from "./live-store";
import { cellKey, type CellView } from "./types";

const cellButton =
  "group/cell flex h-full w-full min-w-0 items-center gap-2 rounded px-2 text-left text-sm focus-visible:outline-2 focus-visible:outline-offset-[-2px] focus-visible:outline-brand-500";

/** One (metric, entity) cell: blank where the metric's level is not the row's. */
export const MetricCell = memo(function MetricCell({ metric, row }: { metric: Metric; row: GridRow }) {
  const rollup = row.entity_type === "conversation" ? row.rollups?.[String(metric.id)] : undefined;
  if (rollup && metric.evaluation_level !== "conversation") return <RollupCell metric={metric} row={row} rollup={rollup} />;
  if (metric.output_type === "pairwise") {
    // Judged in pairs of replies by a comparison, not cell by cell: the cell links to the page that starts one
    // and lists the comparisons made. A conversation row shows it for a message-level metric too (its replies
    // are compared there); it showed "·" forever (issue 51). Other rows do not apply.
    const applies = row.entity_type === "conversation" || metric.evaluation_level === row.entity_type;
    return applies ? <PairwiseCell metric={metric} /> : (
      <span className="px-2 text-slate-300" aria-label="does not apply">
        ·
      </span>
    );
  }
  if (metric.evaluation_level !== row.entity_type) {
    return (
      <span className="px-2 text-slate-300" aria-label="does not apply">
        ·
      </span>
    );
  }
  if (row.entity_type === "step" && !metricAppliesToStep(metric.applies_to, row.step_kinds ?? [])) {
    // The metric judges other kinds of steps: never run here, no result, in no aggregate.
    return (
      <span className="px-2 text-xs text-slate-400" data-testid="grid-cell" data-state="n/a" title={`${metric.name} judges ${(metric.applies_to ?? []).join(", ")} steps only`}>
        n/a
      </span>
    );
  }
  return <ApplicableCell metric={metric} row={row} />;
});

/** A pairwise column's cell: a link to its comparisons (Compare replies), never a Run. */
function PairwiseCell({ metric }: { metric: Metric }) {
  const { datasetId } = useGridActions();
  return (
    <Link
      href={`/datasets/${datasetId}/pairwise?metric=${metric.id}`}
      onClick={(e) => e.stopPropagation()}
      className="px-2 text-xs text-slate-500 hover:text-brand-700 hover:underline"
      data-testid="grid-cell"
      data-state="pairwise"
      title={`${metric.name} compares two replies: its comparisons are on the Compare replies page`}
    >
      in pairs →
    </Link>
  );
}

/**
 * A conversation row's summary of a message- or step-level metric: how its cells in this conversation came
 * out (a pass/fail metric as passed of judged, a score as its mean), so a run at that level shows on the
 * rows before any is opened. Expanding the row shows the cells themselves.
 */
function RollupCell({ metric, row, rollup }: { metric: Metric; row: GridRow; rollup: NonNullable<GridRow["rollups"]>[string] }) {
  const unit = metric.evaluation_level === "message" ? "messages" : "steps";
  const passFail = metric.output_type === "checkbox";
  const passed = passFail && rollup.mean !== null ? Math.round(rollup.mean * rollup.completed) : null;
  const main =
    passed !== null ? `${passed}/${rollup.completed} pass` : rollup.mean !== null ? `avg ${rollup.mean.toFixed(2)}` : rollup.completed ? `${rollup.completed} judged` : "";
  const title =
    `${metric.name} over this conversation's ${unit}: ${rollup.completed} judged` +
    (passed !== null ? `, ${passed} passed` : rollup.mean !== null ? `, mean ${rollup.mean.toFixed(3)}` : "") +
    (rollup.failed ? `, ${rollup.failed} failed to judge` : "") +
    ". Expand the row for each one.";
  return (
    <span className="flex h-full items-center gap-1.5 px-2 text-xs text-slate-600" data-testid="grid-rollup" title={title} aria-label={`${metric.name} on ${row.label}: ${title}`}>
      <span className={cn("tabular-nums", passed !== null && passed < rollup.completed ? "text-amber-800" : "")}>{main}</span>
      {rollup.completed && !passFail ? (
        <span className="text-slate-400">
          ({rollup.completed} {rollup.completed === 1 ? unit.slice(0, -1) : unit})
        </span>
      ) : null}
      {rollup.failed ? <span className="text-red-700">{rollup.failed} failed</span> : null}
    </span>
  );
}

function ApplicableCell({ metric, row }: { metric: Metric; row: GridRow }) {
  const actions = useGridActions();
  const key = cellKey(metric.id, row.entity_type, row.entity_id);
  const live = useLiveCell(actions.store, key);
  const view = viewOf(live, row.cells[String(metric.id)]);
  const where = `${metric.name} on ${row.label}`;
  return (
    <div className="h-full w-full" data-testid="grid-cell" data-state={view.status} data-cell={key}>
      <CellBody view={view} metric={metric} row={row} where={where} />
    </div>
  );
}

function CellBody({ view, metric, row, where }: { view: CellView; metric: Metric; row: GridRow; where: string }) {
  const actions = useGridActions();
  // A viewer reads the grid: no cell runs from a click (the reason is the cell's title).
  const access = useAccess("annotator");
  const stop = (e: React.MouseEvent) => e.stopPropagation();
  switch (view.status) {
    case "empty":
      if (!access.allowed) {
        return (
          <span className={cn(cellButton, "cursor-default text-slate-400")} title={access.why} aria-label={`${where}: not run`}>
            Not run
          </span>
        );
      }
      return (
        <button
          type="button"
          className={cn(cellButton, "text-slate-400 hover:bg-brand-50 hover:text-brand-700")}
          aria-label={`Run ${where}`}
          onClick={(e) => {
            stop(e);
            actions.runCell(metric, row);
          }}
        >
          <span className="group-hover/cell:hidden group-focus-visible/cell:hidden">Not run</span>
          <span className="hidden font-medium group-hover/cell:inline group-focus-visible/cell:inline">▶ Run</span>
        </button>
      );
    case "pending":
      return (
        <span className="flex h-full items-center gap-2 px-2 text-xs text-slate-500" aria-label={`${where}: pending`}>
          <span className="h-2 w-2 animate-pulse rounded-full bg-slate-400" aria-hidden />
          Pending
        </span>
      );
    case "processing":
      return (
        <span className="flex h-full items-center gap-2 px-2 text-xs text-brand-700" aria-label={`${where}: being judged by run #${view.executionId}`}>
          <span className="h-3.5 w-3.5 animate-spin rounded-full border-2 border-brand-100 border-t-brand-600" aria-hidden />
          Judging…
        </span>
      );
    case "failed":
      return (
        <button
          type="button"
          className={cn(cellButton, "text-red-700 hover:bg-red-50 disabled:cursor-default disabled:hover:bg-transparent")}
          disabled={!access.allowed}
          title={access.allowed ? `${view.error ?? "failed"} — click to retry` : `${view.error ?? "failed"} (${access.why})`}
          aria-label={access.allowed ? `${where} failed: ${view.error ?? "failed"}. Retry` : `${where} failed: ${view.error ?? "failed"}`}
          onClick={(e) => {
            stop(e);
            actions.runCell(metric, row);
          }}
        >
          <span aria-hidden>⚠</span>
          <span className="truncate text-xs">{view.error ?? "Error"}</span>
          {access.allowed ? <span className="ml-auto hidden shrink-0 text-xs font-medium group-hover/cell:inline">↻ Retry</span> : null}
        </button>
      );
    case "skipped":
      // A dependency of the metric was not met: recorded, not judged, counted as skipped.
      return (
        <span className="flex h-full items-center px-2 text-xs text-slate-500" title={view.error ?? "skipped"} aria-label={`${where}: skipped`}>
          Skipped
        </span>
      );
    case "completed":
      return (
        <button
          type="button"
          className={cn(cellButton, "hover:bg-slate-100")}
          aria-label={`${where}: show result and reasoning`}
          aria-haspopup="dialog"
          onClick={(e) => {
            stop(e);
            actions.openDetail(e.currentTarget, metric, row);
          }}
        >
          <ResultValue type={metric.output_type} result={view.result} />
        </button>
      );
  }
}
