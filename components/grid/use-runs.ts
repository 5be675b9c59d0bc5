"use client";

/**
 * Runs started from (or still going on) the dataset page: POST the run, follow it over SSE, and write
 * every event into the live cell store. Several runs can go at once; each has its own stream.
 */
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError, apiFetch } from "@/lib/client/api";
import type { Execution, GridRow, IndividualResult } from "@/lib/schemas/executions";
import type { Metric } from "@/lib/schemas/metrics";
import type { LiveCells } from "./live-store";
import { plannedKeys } from "./plan-cells";
import { cellKey, type RunScope, type RunSettings } from "./types";
import { isFinalStatus } from "@/lib/execution-status";

export type RunState = {
  id: number;
  /** What the analyst clicked; runs found already going are described from their scope. */
  label: string | null;
  status: Execution["status"];
  progress: number;
  finished: number;
  total: number;
  execution: Execution;
  /** Set when the stream could not be followed (the run itself goes on in the server). */
  streamError: string | null;
  /** Waiting for a free connection before following the stream. */
  queued: boolean;
  /** The judge's adaptive limit of calls in flight, and the 429s this run met, from the live events. */
  concurrencyLimit?: number | null;
  rateLimits?: number;
};

type CellEvent = { execution_id: number; pipeline_node_id: number; entity_type: GridRow["entity_type"]; entity_id: number; progress: number };
type ProcessingEvent = CellEvent & { status: "processing"; completed: number; total: number; concurrency_limit?: number | null; rate_limits?: number };
type CompleteEvent = CellEvent & { status: "complete"; result: IndividualResult };
type ErrorEvent = CellEvent & { status: "error"; error: { message: string }; result?: IndividualResult };
type DoneEvent = { status: "completed" | "failed" | "cancelled"; execution: Execution };

// Browsers allow six HTTP/1.1 connections per host; keep some free for grid pages and actions.
// Runs beyond this wait, then attach: the stream's snapshot replays the cells they finished meanwhile.
const MAX_STREAMS = 4;

export function describeScope(execution: Execution, metrics: Metric[]): string {
  const metric = metrics.find((m) => m.id === execution.pipeline_node_id)?.name;
  const retry = execution.meta.retry ? "Retry failed · " : "";
  switch (execution.meta.scope) {
    case "all":
      return `${retry}All metrics`;
    case "column":
      return `${retry}Column · ${metric ?? "metric"}`;
    case "row":
      return `${retry}Row · ${execution.meta.entity_type} ${execution.meta.entity_id}`;
    case "rows":
      return `${retry}Every ${execution.meta.entity_type} row`;
    case "cell":
      return `${retry}Cell · ${metric ?? "metric"} · ${execution.meta.entity_type} ${execution.meta.entity_id}`;
  }
}

export function useRuns({ datasetId, store }: { datasetId: number; store: LiveCells }) {
  const queryClient = useQueryClient();
  const [runs, setRuns] = useState<RunState[]>([]);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const streams = useRef(new Map<number, EventSource>());
  const waiting = useRef<number[]>([]);

  const update = useCallback((id: number, change: (run: RunState) => RunState) => {
    setRuns((prev) => prev.map((r) => (r.id === id ? change(r) : r)));
  }, []);

  // The next waiting run is followed through a ref: a callback cannot name itself before it exists.
  const followNext = useRef<(id: number) => void>(() => {});
  const follow = useCallback(
    (id: number) => {
      if (streams.current.has(id)) return;
      if (streams.current.size >= MAX_STREAMS) {
        if (!waiting.current.includes(id)) waiting.current.push(id);
        update(id, (r) => ({ ...r, queued: true }));
        return;
      }
      update(id, (r) => ({ ...r, queued: false }));
      const es = new EventSource(`/api/evaluation-pipeline-executions/${id}/events`);
      streams.current.set(id, es);
      const release = () => {
        es.close();
        streams.current.delete(id);
        const next = waiting.current.shift();
        if (next !== undefined) followNext.current(next);
      };
      const parse = <T,>(e: Event): T => JSON.parse((e as MessageEvent<string>).data) as T;

      es.addEventListener("processing", (e) => {
        const d = parse<ProcessingEvent>(e);
        store.set(cellKey(d.pipeline_node_id, d.entity_type, d.entity_id), { status: "processing", executionId: id, progress: d.progress });
        update(id, (r) => ({
          ...r,
          status: "processing",
          progress: Math.max(r.progress, d.progress),
          total: d.total || r.total,
          concurrencyLimit: d.concurrency_limit ?? r.concurrencyLimit,
          rateLimits: Math.max(r.rateLimits ?? 0, d.rate_limits ?? 0),
        }));
      });
      es.addEventListener("complete", (e) => {
        const d = parse<CompleteEvent>(e);
        store.set(cellKey(d.pipeline_node_id, d.entity_type, d.entity_id), {
          // A cell whose dependency was not met is recorded as skipped (its error says why).
          status: d.result.status === "skipped" ? "skipped" : "completed",
          executionId: id,
          result: d.result.result,
          error: d.result.status === "skipped" ? d.result.error : null,
          updatedAt: d.result.created_at,
          detail: d.result,
        });
        update(id, (r) => ({ ...r, progress: Math.max(r.progress, d.progress), finished: r.finished + 1 }));
      });
      es.addEventListener("error", (e) => {
        // The server's `error` events carry data; a bare Event is the connection dropping, which
        // EventSource retries by itself (with Last-Event-ID) unless the server refused the stream.
        if (e instanceof MessageEvent && typeof e.data === "string" && e.data) {
          const d = parse<ErrorEvent>(e);
          store.set(cellKey(d.pipeline_node_id, d.entity_type, d.entity_id), {
            status: "failed",
            executionId: id,
            result: d.result?.result ?? null,
            error: d.error.message,
            updatedAt: d.result?.created_at ?? new Date().toISOString(),
            detail: d.result ?? null,
          });
          update(id, (r) => ({ ...r, progress: Math.max(r.progress, d.progress), finished: r.finished + 1 }));
        } else if (es.readyState === EventSource.CLOSED) {
          release();
          store.clearUnfinished(id);
          update(id, (r) => ({ ...r, streamError: "Live updates stopped; the run goes on in the server. Reload to see its results." }));
        }
      });
      es.addEventListener("done", (e) => {
        const d = parse<DoneEvent>(e);
        release();
        store.clearUnfinished(id);
        const total = d.execution.total_evaluations;
        update(id, (r) => ({ ...r, status: d.status, execution: d.execution, progress: 100, finished: total, total }));
        void queryClient.invalidateQueries({ queryKey: ["executions", datasetId] });
        // Conversation rows sum up their message and step cells (roll-ups): read the loaded pages again.
        void queryClient.invalidateQueries({ queryKey: ["grid", datasetId] });
      });
    },
    [datasetId, queryClient, store, update],
  );
  useEffect(() => {
    followNext.current = follow;
  }, [follow]);

  const track = useCallback(
    (execution: Execution, label: string | null) => {
      setRuns((prev) =>
        prev.some((r) => r.id === execution.id)
          ? prev
          : [
              ...prev,
              {
                id: execution.id,
                label,
                status: execution.status,
                progress: 0,
                finished: 0,
                total: execution.total_evaluations,
                execution,
                streamError: null,
                queued: false,
              },
            ],
      );
      queueMicrotask(() => follow(execution.id));
    },
    [follow],
  );

  /** Start a run of the given scope with the page's settings; marks the known cells pending at once. */
  const start = useCallback(
    async (scope: RunScope, label: string, known: { rows: GridRow[]; metrics: Metric[] }, settings: RunSettings) => {
      setError(null);
      const body = {
        dataset_id: datasetId,
        ...scope,
        execution_mode: settings.mode,
        ...(settings.mode === "async" ? { batch_size: settings.batchSize } : {}),
        ...(settings.model.trim() ? { model_name: settings.model.trim() } : {}),
      };
      try {
        const { data: execution } = await apiFetch<Execution>("/evaluation-pipeline-executions/run", { method: "POST", json: body });
        store.markPending(plannedKeys(scope, known.rows, known.metrics, store), execution.id);
        track(execution, label);
        void queryClient.invalidateQueries({ queryKey: ["executions", datasetId] });
        return execution;
      } catch (e) {
        setError(e instanceof Error ? e : new Error(String(e)));
        return null;
      }
    },
    [datasetId, queryClient, store, track],
  );

  const cancel = useCallback(
    async (id: number) => {
      try {
        await apiFetch<Execution>(`/evaluation-pipeline-executions/${id}`, { method: "DELETE" });
      } catch (e) {
        // 409: it finished meanwhile; the stream's `done` tells the rest.
        if (!(e instanceof ApiError && e.status === 409)) setError(e instanceof Error ? e : new Error(String(e)));
      }
    },
    [],
  );

  const dismiss = useCallback((id: number) => setRuns((prev) => prev.filter((r) => r.id !== id)), []);

  // Runs already going when the page opens (another tab, a script, a reload) are followed too.
  useEffect(() => {
    let cancelled = false;
    apiFetch<Execution[]>(`/evaluation-pipeline-executions?dataset_id=${datasetId}&limit=20`)
      .then(({ data }) => {
        if (cancelled) return;
        for (const execution of data) if (!isFinalStatus(execution.status)) track(execution, null);
      })
      .catch(() => {
        // Not fatal: the grid still shows stored results, and new runs are followed as usual.
      });
    const open = streams.current;
    return () => {
      cancelled = true;
      for (const es of open.values()) es.close();
      open.clear();
    };
  }, [datasetId, track]);

  return { runs, start, cancel, dismiss, error, clearError: () => setError(null) };
}
