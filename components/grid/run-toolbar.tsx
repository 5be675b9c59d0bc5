"use client";

import Link from "next/link";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import type { Metric } from "@/lib/schemas/metrics";
import { AddMetricMenu } from "./add-metric-menu";
import { GridExportMenu } from "./grid-export-menu";
import type { RunSettings } from "./types";
import { MAX_BATCH_SIZE } from "./use-run-settings";

const inputClass =
  "h-9 rounded-md border border-slate-300 bg-white px-2.5 text-sm shadow-sm focus:border-brand-500 focus:outline-none focus:ring-2 focus:ring-brand-100";

/** Run all / retry failed, the run settings every run from this page uses, and the page's links. */
export function RunToolbar({
  datasetId,
  settings,
  onSettings,
  onRunAll,
  onRetryFailed,
  canRun,
  running = false,
  defaultModel,
  onMetricAdded,
  onError,
}: {
  datasetId: number;
  settings: RunSettings;
  onSettings: (s: RunSettings) => void;
  onRunAll: () => void;
  onRetryFailed: () => void;
  canRun: boolean;
  /** A run started here is still going. */
  running?: boolean;
  defaultModel: string;
  onMetricAdded: (m: Metric) => void;
  onError: (e: Error) => void;
}) {
  const batchInvalid = !Number.isInteger(settings.batchSize) || settings.batchSize < 1 || settings.batchSize > MAX_BATCH_SIZE;
  return (
    <div className="flex flex-wrap items-end gap-3 rounded-lg border border-slate-200 bg-white px-4 py-3 shadow-sm" role="toolbar" aria-label="Run controls">
      <div className="flex items-center gap-2">
        <Button
          needs="annotator"
          onClick={onRunAll}
          disabled={!canRun || batchInvalid || running}
          title={running ? "A run is going: wait for it or cancel it" : canRun ? "Evaluate every cell of every metric" : "Add a metric first"}
        >
          {running ? "Running…" : "▶ Run all"}
        </Button>
        <Button
          needs="annotator"
          variant="secondary"
          onClick={onRetryFailed}
          disabled={!canRun || batchInvalid || running}
          title={running ? "A run is going: wait for it or cancel it" : "Evaluate only cells whose latest result failed or is missing"}
        >
          ↻ Retry failed
        </Button>
      </div>
      <div className="h-9 w-px bg-slate-200" aria-hidden />
      <fieldset className="flex items-end gap-3">
        <legend className="sr-only">Run settings</legend>
        <div>
          <span className="mb-1 block text-xs font-medium text-slate-500" id="run-mode-label">
            Mode
          </span>
          <div role="radiogroup" aria-labelledby="run-mode-label" className="inline-flex h-9 rounded-md border border-slate-300 bg-slate-50 p-0.5 shadow-sm">
            {(["sync", "async"] as const).map((mode) => (
              <label
                key={mode}
                className={cn(
                  "flex cursor-pointer items-center rounded px-3 text-sm font-medium has-[:focus-visible]:outline-2 has-[:focus-visible]:outline-brand-500",
                  settings.mode === mode ? "bg-white text-slate-900 shadow-sm" : "text-slate-500 hover:text-slate-800",
                )}
              >
                <input
                  type="radio"
                  name="run-mode"
                  value={mode}
                  className="sr-only"
                  checked={settings.mode === mode}
                  onChange={() => onSettings({ ...settings, mode })}
                />
                {mode === "sync" ? "Sync" : "Async"}
              </label>
            ))}
          </div>
        </div>
        <div>
          <label htmlFor="run-batch" className="mb-1 block text-xs font-medium text-slate-500">
            Batch size
          </label>
          <input
            id="run-batch"
            type="number"
            min={1}
            max={MAX_BATCH_SIZE}
            disabled={settings.mode !== "async"}
            value={Number.isNaN(settings.batchSize) ? "" : settings.batchSize}
            aria-invalid={batchInvalid}
            aria-describedby={batchInvalid ? "run-batch-error" : undefined}
            onChange={(e) => onSettings({ ...settings, batchSize: e.target.valueAsNumber })}
            className={cn(inputClass, "w-20 disabled:bg-slate-50 disabled:text-slate-400 aria-[invalid=true]:border-red-500")}
          />
          {batchInvalid ? (
            <span id="run-batch-error" role="alert" className="absolute mt-0.5 text-xs text-red-600">
              1–{MAX_BATCH_SIZE}
            </span>
          ) : null}
        </div>
        <div>
          <label htmlFor="run-model" className="mb-1 block text-xs font-medium text-slate-500">
            Model override
          </label>
          <input
            id="run-model"
            type="text"
            value={settings.model}
            maxLength={200}
            placeholder={`metric's model or ${defaultModel}`}
            onChange={(e) => onSettings({ ...settings, model: e.target.value })}
            className={cn(inputClass, "w-56")}
          />
        </div>
      </fieldset>
      <div className="ml-auto flex items-center gap-2">
        <AddMetricMenu datasetId={datasetId} onAdded={onMetricAdded} onError={onError} />
        <Link
          href={`/datasets/${datasetId}/executions`}
          className="inline-flex h-9 items-center rounded-md px-3 text-sm font-medium text-slate-700 hover:bg-slate-100"
        >
          History
        </Link>
        <Link href={`/datasets/${datasetId}/live`} className="inline-flex h-9 items-center rounded-md px-3 text-sm font-medium text-slate-700 hover:bg-slate-100">
          Live
        </Link>
        <GridExportMenu datasetId={datasetId} />
        <Link href={`/import?dataset_id=${datasetId}`} className="inline-flex h-9 items-center rounded-md px-3 text-sm font-medium text-slate-700 hover:bg-slate-100">
          Import
        </Link>
      </div>
    </div>
  );
}
