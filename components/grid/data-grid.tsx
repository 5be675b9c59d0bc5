"use client";

import { flexRender, getCoreRowModel, useReactTable, type ColumnDef, type Row } from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useEffect, useMemo, useRef } from "react";
import { cn } from "@/components/ui/cn";
import type { Metric } from "@/lib/schemas/metrics";
import { EntityCell } from "./entity-cell";
import { useGridActions, useRowState } from "./grid-context";
import { MetricCell } from "./metric-cell";
import { MetricHeader } from "./metric-header";
import type { DisplayRow } from "./types";

const ROW_HEIGHT = 44;
const noMetaKeys: string[] = [];
const ENTITY_WIDTH = 380;
const METRIC_WIDTH = 210;
const META_WIDTH = 130;

function metaText(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function buildColumns(
  metrics: Metric[],
  datasetId: number,
  onRunColumn: (m: Metric, retry: boolean) => void,
  metaKeys: string[],
): ColumnDef<DisplayRow>[] {
  return [
    {
      id: "entity",
      size: ENTITY_WIDTH,
      header: () => <span className="px-3">Conversation · message · step</span>,
      cell: ({ row }) => {
        const d = row.original;
        return d.kind === "entity" ? <EntityCell row={d.row} depth={d.depth} expandable={d.expandable} index={d.index} /> : null;
      },
    },
    // Conversation meta fields asked for in the view; message and step rows leave them blank.
    ...metaKeys.map<ColumnDef<DisplayRow>>((key) => ({
      id: `meta-${key}`,
      size: META_WIDTH,
      header: () => <span className="truncate px-3 normal-case" title={`meta.${key}`}>meta.{key}</span>,
      cell: ({ row }) => {
        const d = row.original;
        const text = d.kind === "entity" && d.depth === 0 ? metaText(d.row.meta?.[key]) : "";
        return (
          <span className="truncate px-2 font-mono text-xs text-slate-700" data-testid="meta-cell" data-key={key}>
            {text}
          </span>
        );
      },
    })),
    ...metrics.map<ColumnDef<DisplayRow>>((metric) => ({
      id: `metric-${metric.id}`,
      size: METRIC_WIDTH,
      header: () => <MetricHeader metric={metric} datasetId={datasetId} onRunColumn={onRunColumn} />,
      cell: ({ row }) => (row.original.kind === "entity" ? <MetricCell metric={metric} row={row.original.row} /> : null),
    })),
  ];
}

/**
 * The dataset grid: @tanstack/react-table for the columns, @tanstack/react-virtual for the rows, so
 * only the rows on screen exist in the DOM however many conversations the dataset has.
 */
export const DataGrid = memo(function DataGrid({
  datasetId,
  metrics,
  rows,
  requestRows,
  onRunColumn,
  metaKeys = noMetaKeys,
}: {
  datasetId: number;
  metrics: Metric[];
  rows: DisplayRow[];
  requestRows: (indexes: number[]) => void;
  onRunColumn: (metric: Metric, retry: boolean) => void;
  metaKeys?: string[];
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const columns = useMemo(() => buildColumns(metrics, datasetId, onRunColumn, metaKeys), [metrics, datasetId, onRunColumn, metaKeys]);
  const table = useReactTable({ data: rows, columns, getCoreRowModel: getCoreRowModel(), getRowId: (r) => r.id });
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 15,
  });
  const items = virtualizer.getVirtualItems();
  const tableRows = table.getRowModel().rows;
  // A track list with no metric column names no `repeat(0, …)`: CSS refuses a repeat of zero and with it the
  // whole template, so meta columns without a metric stacked their headers in one column (issue 51).
  const metaTemplate = metaKeys.length ? ` repeat(${metaKeys.length}, ${META_WIDTH}px)` : "";
  const metricTemplate = metrics.length ? ` repeat(${metrics.length}, ${METRIC_WIDTH}px)` : "";
  // The first column takes the room the metric columns leave (labels were cut with 40% of the width empty).
  const template = `minmax(${ENTITY_WIDTH}px, 1fr)${metaTemplate}${metricTemplate}`;
  const width = ENTITY_WIDTH + metaKeys.length * META_WIDTH + metrics.length * METRIC_WIDTH;

  // Fetch the pages of the conversations that scrolled into view (placeholders) — page by page.
  const first = items[0]?.index ?? 0;
  const last = items[items.length - 1]?.index ?? 0;
  useEffect(() => {
    const missing: number[] = [];
    for (let i = first; i <= last; i++) {
      const r = rows[i];
      if (r?.kind === "placeholder") missing.push(r.index);
    }
    if (missing.length) requestRows(missing);
  }, [first, last, rows, requestRows]);

  const headerGroup = table.getHeaderGroups()[0];
  const before = items[0]?.start ?? 0;
  const after = virtualizer.getTotalSize() - (items[items.length - 1]?.end ?? 0);

  return (
    <div
      ref={scroller}
      className="relative h-[calc(100vh-15rem)] min-h-[420px] overflow-auto rounded-lg border border-slate-200 bg-white shadow-sm"
      role="table"
      aria-label="Evaluation grid"
      aria-rowcount={rows.length + 1}
      aria-colcount={metrics.length + metaKeys.length + 1}
      data-testid="grid-scroller"
    >
      <div style={{ width: `max(100%, ${width}px)` }}>
        <div role="rowgroup" className="sticky top-0 z-20">
          <div
            role="row"
            aria-rowindex={1}
            className="grid h-14 border-b border-slate-200 bg-slate-50 text-xs font-semibold uppercase tracking-wide text-slate-500"
            style={{ gridTemplateColumns: template }}
          >
            {headerGroup.headers.map((header, i) => (
              <div
                key={header.id}
                role="columnheader"
                className={cn("flex items-center border-r border-slate-100", i === 0 && "sticky left-0 z-10 bg-slate-50")}
              >
                {flexRender(header.column.columnDef.header, header.getContext())}
              </div>
            ))}
          </div>
        </div>
        <div role="rowgroup">
          {before > 0 ? <div style={{ height: before }} aria-hidden /> : null}
          {items.map((item) => {
            const row = tableRows[item.index];
            return row ? <GridLine key={row.id} row={row} ariaIndex={item.index + 2} template={template} /> : null;
          })}
          {after > 0 ? <div style={{ height: after }} aria-hidden /> : null}
        </div>
      </div>
      {metrics.length === 0 ? (
        <p className="sticky left-0 px-5 py-3 text-sm text-slate-500">No metrics yet — add one to get a column to run.</p>
      ) : null}
    </div>
  );
});

const GridLine = memo(function GridLine({ row, ariaIndex, template }: { row: Row<DisplayRow>; ariaIndex: number; template: string }) {
  const d = row.original;
  const actions = useGridActions();
  const { selected } = useRowState();
  if (d.kind === "placeholder") {
    return (
      <div role="row" aria-rowindex={ariaIndex} aria-busy className="flex items-center gap-3 border-b border-slate-100 px-3" style={{ height: ROW_HEIGHT }} data-testid="grid-placeholder">
        <span className="w-[5.25rem] text-right text-xs tabular-nums text-slate-300">{d.index + 1}</span>
        <span className="h-3 w-56 animate-pulse rounded bg-slate-100" />
      </div>
    );
  }
  if (d.kind === "note") {
    return (
      <div role="row" aria-rowindex={ariaIndex} className="flex items-center border-b border-slate-100 bg-slate-50/60" style={{ height: ROW_HEIGHT }}>
        <span role="cell" className={cn("sticky left-0 pl-16 text-sm", d.tone === "error" ? "text-red-700" : "text-slate-500")}>
          {d.text}
        </span>
      </div>
    );
  }
  const isSelected = selected === `${d.row.entity_type}:${d.row.entity_id}`;
  const bg = isSelected ? "bg-brand-50" : d.depth === 0 ? "bg-white" : "bg-slate-50";
  return (
    <div
      role="row"
      aria-rowindex={ariaIndex}
      aria-selected={isSelected}
      data-testid="grid-row"
      data-level={d.row.entity_type}
      data-entity={`${d.row.entity_type}:${d.row.entity_id}`}
      className={cn("group/row grid cursor-pointer border-b border-slate-100 hover:bg-slate-50", bg)}
      style={{ gridTemplateColumns: template, height: ROW_HEIGHT }}
      onClick={() => actions.openRow(d.row)}
    >
      {row.getVisibleCells().map((cell, i) => (
        <div
          key={cell.id}
          role={i === 0 ? "rowheader" : "cell"}
          className={cn("flex min-w-0 items-center border-r border-slate-100 py-1", i === 0 && cn("sticky left-0 z-10 group-hover/row:bg-slate-50", bg), i > 0 && "px-1")}
        >
          {flexRender(cell.column.columnDef.cell, cell.getContext())}
        </div>
      ))}
    </div>
  );
});
