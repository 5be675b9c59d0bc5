"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { Card, CardHeader } from "@/components/ui/card";
import { Select } from "@/components/ui/select";
import { Table, Td, Th } from "@/components/ui/table";
import { formatDateTime, formatDuration, formatTokens } from "@/components/results/format";
import { ApiError, apiFetch } from "@/lib/client/api";
import type { Execution } from "@/lib/schemas/executions";
import type { Metric } from "@/lib/schemas/metrics";
import { ExecutionActions, isRunning } from "./execution-actions";
import { ExecutionStatusBadge } from "./status-badge";
import { Pager } from "@/components/ui/pager";

const PAGE_SIZE = 25;
const statuses = ["pending", "processing", "completed", "failed", "cancelled"] as const;
type Status = (typeof statuses)[number];

export function scopeText(e: Execution): string {
  const entity = e.meta.entity_type ? `${e.meta.entity_type} ${e.meta.entity_id}` : "";
  const scope = { all: "All", column: "Column", row: `Row · ${entity}`, rows: `Every ${e.meta.entity_type} row`, cell: `Cell · ${entity}` }[e.meta.scope];
  return e.meta.retry ? `${scope} (retry failed)` : scope;
}

/** The metrics a run judged: the one metric, the list it was asked for, or all of them. */
export function runMetricsText(e: Execution, nameOf: (id: number) => string): string {
  if (e.pipeline_node_id != null) return nameOf(e.pipeline_node_id);
  const ids = e.meta.pipeline_node_ids;
  if (ids?.length) return ids.map(nameOf).join(", ");
  return "All metrics";
}

/** What started a run when not a person at the grid (meta.trigger): said in History and on the run page. */
export function madeByText(e: Execution): { text: string; href: string | null } | null {
  const trigger = e.meta.trigger;
  if (!trigger) return null;
  if (trigger === "gate") return { text: "CI gate (turnscope eval)", href: null };
  const [kind, id] = trigger.split(":");
  if (kind === "generation") return { text: `Evaluate and compare · generation ${id}`, href: null };
  if (kind === "rule") return { text: `Online rule ${id}`, href: `/datasets/${e.dataset_id}/live` };
  return { text: trigger, href: null };
}

/** Every run of a dataset, newest first: filters, live status, cancel, re-run, retry and export. */
export function ExecutionsHistory({
  datasetId,
  metrics,
  initialStatus,
  initialMetric,
}: {
  datasetId: number;
  metrics: Metric[];
  initialStatus: Status | null;
  initialMetric: number | null;
}) {
  const [status, setStatus] = useState<Status | "">(initialStatus ?? "");
  const [metric, setMetric] = useState<number | "">(initialMetric ?? "");
  const [offset, setOffset] = useState(0);
  const [notice, setNotice] = useState<{ tone: "error" | "ok"; text: string; details?: ApiError["details"] } | null>(null);

  const params = new URLSearchParams({ dataset_id: String(datasetId), limit: String(PAGE_SIZE), offset: String(offset) });
  if (status) params.set("status", status);
  if (metric !== "") params.set("pipeline_node_id", String(metric));
  const query = useQuery({
    queryKey: ["executions", datasetId, status, metric, offset],
    queryFn: async () => {
      const { data, total } = await apiFetch<Execution[]>(`/evaluation-pipeline-executions?${params}`);
      return { items: data, total: total ?? data.length };
    },
    placeholderData: keepPreviousData,
    // While a run is going its row follows it; a finished list does not poll.
    refetchInterval: (q) => (q.state.data?.items.some(isRunning) ? 1500 : false),
  });
  const items = query.data?.items ?? [];
  const total = query.data?.total ?? 0;
  const nameOf = (id: number) => metrics.find((m) => m.id === id)?.name ?? `Metric ${id}`;

  const onError = (e: Error) => setNotice({ tone: "error", text: e.message, details: e instanceof ApiError ? e.details : undefined });
  const onStarted = (e: Execution) => setNotice({ tone: "ok", text: `Started run #${e.id}.` });

  return (
    <Card>
      <CardHeader
        title="Runs"
        description={total === 1 ? "1 run" : `${total} runs`}
        actions={
          <div className="flex items-end gap-3">
            <label className="text-xs font-medium text-slate-500">
              Status
              <Select
                aria-label="Filter by status"
                value={status}
                className="mt-1 h-9 w-40"
                onChange={(e) => {
                  setStatus(e.target.value as Status | "");
                  setOffset(0);
                }}
              >
                <option value="">Any status</option>
                {statuses.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </Select>
            </label>
            <label className="text-xs font-medium text-slate-500">
              Metric
              <Select
                aria-label="Filter by metric"
                value={metric === "" ? "" : String(metric)}
                className="mt-1 h-9 w-56"
                onChange={(e) => {
                  setMetric(e.target.value ? Number(e.target.value) : "");
                  setOffset(0);
                }}
              >
                <option value="">Any metric</option>
                {metrics.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.name}
                  </option>
                ))}
              </Select>
            </label>
          </div>
        }
      />
      {notice ? (
        <div role={notice.tone === "error" ? "alert" : "status"} className={notice.tone === "error" ? "bg-red-50 px-5 py-2 text-sm text-red-800" : "bg-emerald-50 px-5 py-2 text-sm text-emerald-800"}>
          {notice.text}
          {notice.details?.map((d, i) => (
            <span key={i} className="block font-mono text-xs">
              {d.path}: {d.message}
            </span>
          ))}
        </div>
      ) : null}
      {query.error ? <p role="alert" className="px-5 py-3 text-sm text-red-700">Could not load runs: {query.error.message}</p> : null}
      {items.length === 0 && !query.isPending ? (
        <p className="px-5 py-10 text-center text-sm text-slate-500">No runs{status || metric !== "" ? " match these filters" : " yet"}.</p>
      ) : (
        <Table aria-label="Executions">
          <thead>
            <tr>
              <Th className="px-3">Run</Th>
              <Th className="px-3">Scope · metric</Th>
              <Th className="px-3">Mode · model</Th>
              <Th className="px-3">Started · duration</Th>
              <Th className="px-3 text-right">Results</Th>
              <Th className="px-3 text-right">Tokens</Th>
              <Th className="px-3 text-right">Actions</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {items.map((e) => (
              <tr key={e.id} data-testid="execution-row" data-execution={e.id} className="hover:bg-slate-50">
                <Td className="whitespace-nowrap px-3">
                  <Link href={`/executions/${e.id}`} className="font-medium text-brand-700 hover:underline">
                    #{e.id}
                  </Link>
                  <div className="mt-1">
                    <ExecutionStatusBadge status={e.status} />
                  </div>
                </Td>
                <Td className="max-w-56 px-3">
                  <span className="block whitespace-nowrap">{scopeText(e)}</span>
                  <span className="block truncate text-xs text-slate-500" title={runMetricsText(e, nameOf)}>
                    {runMetricsText(e, nameOf)}
                  </span>
                  {madeByText(e) ? (
                    // Wrapped, not cut: "made by Evaluate and compare · …" hid which generation made the run.
                    <span className="block text-xs text-slate-500" data-testid="run-made-by">
                      made by {madeByText(e)!.text}
                    </span>
                  ) : null}
                </Td>
                <Td className="max-w-48 px-3">
                  <span className="block whitespace-nowrap">{e.meta.execution_mode === "async" ? `async ×${e.meta.batch_size}` : "sync"}</span>
                  <span className="block truncate text-xs text-slate-500" title={e.meta.model ?? undefined}>
                    {e.meta.model ?? "metric's or default model"}
                  </span>
                </Td>
                <Td className="whitespace-nowrap px-3 text-slate-600">
                  {formatDateTime(e.started_at ?? e.created_at)}
                  <span className="block text-xs tabular-nums text-slate-500">{isRunning(e) ? "running…" : formatDuration(e.duration_ms)}</span>
                </Td>
                <Td className="whitespace-nowrap px-3 text-right tabular-nums">
                  <span className="text-emerald-700" title="succeeded">
                    {e.successful_evaluations} ✓
                  </span>{" "}
                  <span className={e.failed_evaluations ? "text-red-700" : "text-slate-400"} title="failed">
                    {e.failed_evaluations} ✗
                  </span>
                  <span className="block text-xs text-slate-500">of {e.total_evaluations}</span>
                </Td>
                <Td className="whitespace-nowrap px-3 text-right tabular-nums text-slate-600">
                  {formatTokens(e.meta.input_tokens)} in
                  <span className="block text-xs text-slate-500">{formatTokens(e.meta.output_tokens)} out</span>
                </Td>
                <Td className="px-3">
                  <ExecutionActions execution={e} onStarted={onStarted} onError={onError} compact />
                </Td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <Pager offset={offset} pageSize={PAGE_SIZE} total={total} onOffset={setOffset} />
    </Card>
  );
}
