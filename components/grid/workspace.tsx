"use client";

import { useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { ConversationPanel } from "@/components/conversation/conversation-panel";
import { ApiError, apiFetch } from "@/lib/client/api";
import { isFinalStatus } from "@/lib/execution-status";
import type { GridRow, RunEstimate } from "@/lib/schemas/executions";
import type { Metric } from "@/lib/schemas/metrics";
import { CellDetail } from "./cell-detail";
import { DataGrid } from "./data-grid";
import { GridActionsContext, RowStateContext, type GridActions } from "./grid-context";
import { LiveCells } from "./live-store";
import { RunList } from "./run-list";
import { CONFIRM_ABOVE_CELLS, RunEstimateConfirm } from "./run-estimate";
import { RunToolbar } from "./run-toolbar";
import type { RunScope } from "./types";
import { useRunSettings } from "./use-run-settings";
import { GridViewBar } from "@/components/trust/grid-view-bar";
import { emptyView, keepViewInUrl, useGridData, type GridView } from "./use-grid-data";
import { useRuns } from "./use-runs";

type Detail = { anchor: HTMLElement; metric: Metric; row: GridRow };
type Panel = { conversationId: number; focus: string | null; selected: string };

/** The analyst's workspace on a dataset: run controls, the live grid, and the conversation panel. */
export function Workspace({
  datasetId,
  initialMetrics,
  initialGrid,
  defaultModel,
  initialOpen,
  initialView = emptyView,
}: {
  datasetId: number;
  initialMetrics: Metric[];
  initialGrid: { items: GridRow[]; total: number };
  defaultModel: string;
  /** A cell to open on arrival (links from the agreement page): its conversation, focused on the entity. */
  initialOpen?: { entityType: string; entityId: number; conversationId: number } | null;
  /** Meta columns, filter and sort from the page's address. */
  initialView?: GridView;
}) {
  const [store] = useState(() => new LiveCells());
  const [settings, setSettings] = useRunSettings(datasetId);
  const [panel, setPanel] = useState<Panel | null>(() =>
    initialOpen
      ? {
          conversationId: initialOpen.conversationId,
          focus: initialOpen.entityType === "conversation" ? null : `${initialOpen.entityType}:${initialOpen.entityId}`,
          selected: `${initialOpen.entityType}:${initialOpen.entityId}`,
        }
      : null,
  );
  const [detail, setDetail] = useState<Detail | null>(null);
  const [notice, setNotice] = useState<Error | null>(null);
  // Not an error: a click that had nothing to do says so (a retry with nothing failed records no run).
  const [info, setInfo] = useState<string | null>(null);

  const metricsQuery = useQuery({
    queryKey: ["metrics", datasetId],
    queryFn: async () => (await apiFetch<Metric[]>(`/evaluation-pipeline-nodes?dataset_id=${datasetId}`)).data,
    initialData: initialMetrics,
  });
  const metrics = metricsQuery.data;
  const [view, setView] = useState<GridView>(initialView);
  // A view the API refused: said once, beside the fields, while the grid keeps the rows it had.
  const [viewError, setViewError] = useState<Error | null>(null);
  const metaKeys = useMemo(() => (view.meta ? view.meta.split(",").map((k) => k.trim()).filter(Boolean) : []), [view.meta]);
  const grid = useGridData(datasetId, initialGrid, view);
  const { checkView } = grid;
  const applyView = useCallback(
    async (next: GridView) => {
      try {
        await checkView(next);
      } catch (e) {
        setViewError(e instanceof Error ? e : new Error(String(e)));
        return;
      }
      setViewError(null);
      setView(next);
      keepViewInUrl(next);
    },
    [checkView],
  );
  const runs = useRuns({ datasetId, store });

  // Run callbacks are stable (the grid's columns and cells never re-render because of them) and read
  // the latest rows, metrics and settings from here.
  const latest = useRef({ rows: grid.rows, metrics, settings });
  useEffect(() => {
    latest.current = { rows: grid.rows, metrics, settings };
  }, [grid.rows, metrics, settings]);

  const { start } = runs;
  const startNow = useCallback(
    (scope: RunScope, label: string) => {
      const { rows, metrics, settings } = latest.current;
      const known = rows.flatMap((r) => (r.kind === "entity" ? [r.row] : []));
      void start(scope, label, { rows: known, metrics }, settings);
    },
    [start],
  );
  // A run of more than CONFIRM_ABOVE_CELLS cells is priced first (dry run) and starts once confirmed.
  const [confirming, setConfirming] = useState<{ scope: RunScope; label: string; estimate: RunEstimate } | null>(null);
  const run = useCallback(
    (scope: RunScope, label: string) => {
      setNotice(null);
      setInfo(null);
      setConfirming(null);
      if (scope.entity_id != null && scope.pipeline_node_id != null) return startNow(scope, label); // one cell
      const { settings } = latest.current;
      const body = {
        dataset_id: datasetId,
        ...scope,
        execution_mode: settings.mode,
        ...(settings.mode === "async" ? { batch_size: settings.batchSize } : {}),
        ...(settings.model.trim() ? { model_name: settings.model.trim() } : {}),
        dry_run: true,
      };
      apiFetch<RunEstimate>("/evaluation-pipeline-executions/run", { method: "POST", json: body })
        .then(({ data }) => {
          if (scope.retry && data.cells === 0) return setInfo("Nothing to retry: every cell here already has a completed result, so no run was started.");
          return data.cells > CONFIRM_ABOVE_CELLS ? setConfirming({ scope, label, estimate: data }) : startNow(scope, label);
        })
        // The run itself says what is wrong (its error shows as any run's does).
        .catch(() => startNow(scope, label));
    },
    [datasetId, startNow],
  );

  const runColumn = useCallback(
    (metric: Metric, retry: boolean) => run({ pipeline_node_id: metric.id, retry }, `${retry ? "Retry failed · " : ""}Column · ${metric.name}`),
    [run],
  );

  const { toggleExpanded } = grid;
  const actions = useMemo<GridActions>(
    () => ({
      store,
      datasetId,
      runCell: (metric, row, opts) =>
        run(
          { pipeline_node_id: metric.id, entity_type: row.entity_type, entity_id: row.entity_id, ...(opts?.fresh ? { no_cache: true } : {}) },
          `Cell · ${metric.name} · ${row.label}`,
        ),
      runRow: (row) => run({ entity_type: row.entity_type, entity_id: row.entity_id }, `Row · ${row.label}`),
      openDetail: (anchor, metric, row) => setDetail({ anchor, metric, row }),
      openRow: (row) =>
        setPanel({
          conversationId: row.conversation_id,
          focus: row.entity_type === "conversation" ? null : `${row.entity_type}:${row.entity_id}`,
          selected: `${row.entity_type}:${row.entity_id}`,
        }),
      toggleExpanded,
    }),
    [store, datasetId, run, toggleExpanded],
  );
  const rowState = useMemo(() => ({ expanded: grid.expanded, selected: panel?.selected ?? null }), [grid.expanded, panel]);
  const closeDetail = useCallback(() => setDetail(null), []);
  const closePanel = useCallback(() => setPanel(null), []);

  const error = notice ?? runs.error;
  // A run of this page still going: Run all and Retry failed wait for it (a cell, row or column can still run).
  const running = runs.runs.some((r) => !isFinalStatus(r.status));
  return (
    <GridActionsContext.Provider value={actions}>
      <RowStateContext.Provider value={rowState}>
        <div className="space-y-3">
          <RunToolbar
            datasetId={datasetId}
            settings={settings}
            onSettings={setSettings}
            onRunAll={() => run({}, "All metrics")}
            onRetryFailed={() => run({ retry: true }, "Retry failed · all metrics")}
            canRun={metrics.length > 0 && grid.total > 0}
            running={running}
            defaultModel={defaultModel}
            onMetricAdded={() => setNotice(null)}
            onError={setNotice}
          />
          {confirming ? (
            <RunEstimateConfirm
              label={confirming.label}
              estimate={confirming.estimate}
              onStart={(maxCostUsd) => {
                setConfirming(null);
                startNow({ ...confirming.scope, ...(maxCostUsd !== null ? { max_cost_usd: maxCostUsd } : {}) }, confirming.label);
              }}
              onCancel={() => setConfirming(null)}
            />
          ) : null}
          {info ? (
            <div role="status" data-testid="run-info" className="flex items-start gap-3 rounded-lg border border-slate-200 bg-white px-4 py-3 text-sm text-slate-700">
              <p className="flex-1">{info}</p>
              <button type="button" onClick={() => setInfo(null)} aria-label="Dismiss" title="Dismiss" className="rounded px-1.5 text-slate-500 hover:bg-slate-100">
                ✕
              </button>
            </div>
          ) : null}
          {error ? <ErrorNotice error={error} onDismiss={() => (notice ? setNotice(null) : runs.clearError())} /> : null}
          <RunList runs={runs.runs} metrics={metrics} onCancel={runs.cancel} onDismiss={runs.dismiss} />
          <GridViewBar view={view} onApply={applyView} metrics={metrics} error={viewError} onDismissError={() => setViewError(null)} />
          {grid.pageError ? (
            // The rows could not be read (an invalid filter, sort or meta key): the reason, not an empty grid.
            <div data-testid="grid-error">
              <ErrorNotice error={grid.pageError} onDismiss={() => void applyView(emptyView)} dismissLabel="Clear the view" />
            </div>
          ) : grid.total === 0 && !view.meta && !view.filter && !view.sort ? (
            <p className="rounded-lg border border-dashed border-slate-300 bg-white px-5 py-10 text-center text-sm text-slate-500">
              No conversations yet. Import some to fill the grid.
            </p>
          ) : (
            <DataGrid datasetId={datasetId} metrics={metrics} rows={grid.rows} requestRows={grid.requestRows} onRunColumn={runColumn} metaKeys={metaKeys} />
          )}
          {grid.pageError ? null : (
            <p className="text-xs text-slate-500">
              {grid.total.toLocaleString()} {grid.total === 1 ? "conversation" : "conversations"} · click a row to open it, a result for the judge&apos;s reasoning, an error to retry it.
            </p>
          )}
        </div>
        {detail ? <CellDetail anchor={detail.anchor} metric={detail.metric} row={detail.row} onClose={closeDetail} /> : null}
        {panel ? <ConversationPanel conversationId={panel.conversationId} focus={panel.focus} onClose={closePanel} /> : null}
      </RowStateContext.Provider>
    </GridActionsContext.Provider>
  );
}

function ErrorNotice({ error, onDismiss, dismissLabel = "Dismiss error" }: { error: Error; onDismiss: () => void; dismissLabel?: string }) {
  // The API's message already quotes a single detail ("Invalid query parameter (filter: …)"): say it once.
  const details = (error instanceof ApiError ? error.details : []).filter((d) => !error.message.includes(d.message));
  return (
    <div role="alert" className="flex items-start gap-3 rounded-lg border border-red-200 bg-red-50 px-4 py-3 text-sm text-red-800">
      <div className="flex-1">
        <p className="font-medium">{error.message}</p>
        {details.length ? (
          <ul className="mt-1 list-disc pl-5">
            {details.map((d, i) => (
              <li key={i}>
                <span className="font-mono text-xs">{d.path}</span>: {d.message}
              </li>
            ))}
          </ul>
        ) : null}
      </div>
      <button type="button" onClick={onDismiss} aria-label={dismissLabel} title={dismissLabel} className="rounded px-1.5 text-red-700 hover:bg-red-100">
        ✕
      </button>
    </div>
  );
}
