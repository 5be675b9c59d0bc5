"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useState } from "react";
import { Card, CardHeader } from "@/components/ui/card";
import { Table, Td, Th } from "@/components/ui/table";
import { formatDateTime, formatDuration, formatTokens } from "@/components/results/format";
import { ApiError, apiFetch } from "@/lib/client/api";
import type { Execution, ExecutionError, IndividualResult, Aggregated } from "@/lib/schemas/executions";
import type { Metric } from "@/lib/schemas/metrics";
import { AggregateCard } from "./aggregate-card";
import { ExecutionActions, isRunning } from "./execution-actions";
import { madeByText, runMetricsText, scopeText } from "./executions-history";
import { ResultsTable } from "./results-table";
import { ExecutionStatusBadge } from "./status-badge";

type Results = { execution_id: number; results: IndividualResult[]; aggregated: Record<string, Aggregated>; errors: ExecutionError[] };

function Fact({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <dt className="text-xs font-medium text-slate-500">{label}</dt>
      <dd className="mt-0.5 text-sm text-slate-900">{children}</dd>
    </div>
  );
}

/** One execution: its facts, per-metric aggregates with charts, the errors and every result. */
export function ExecutionView({ initial, metrics, datasetName }: { initial: Execution; metrics: Metric[]; datasetName: string }) {
  const queryClient = useQueryClient();
  const [notice, setNotice] = useState<{ tone: "error" | "ok"; text: string; started?: number } | null>(null);
  const execution = useQuery({
    queryKey: ["execution", initial.id],
    queryFn: async () => (await apiFetch<Execution>(`/evaluation-pipeline-executions/${initial.id}`)).data,
    initialData: initial,
    refetchInterval: (q) => (q.state.data && isRunning(q.state.data) ? 1500 : false),
  }).data;
  const running = isRunning(execution);
  const results = useQuery({
    queryKey: ["execution-results", initial.id],
    queryFn: async () => (await apiFetch<Results>(`/evaluation-pipeline-executions/${initial.id}/results`)).data,
    refetchInterval: running ? 3000 : false,
  });

  // When the run ends, read its results once more so the aggregates are final.
  useEffect(() => {
    if (!running) void queryClient.invalidateQueries({ queryKey: ["execution-results", initial.id] });
  }, [running, initial.id, queryClient]);

  const byId = new Map(metrics.map((m) => [m.id, m]));
  const nameOf = (id: number) => byId.get(id)?.name ?? `Metric ${id}`;
  const madeBy = madeByText(execution);
  const aggregated = Object.entries(results.data?.aggregated ?? {});
  const errors = results.data?.errors ?? execution.errors;

  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-start justify-between gap-4">
        <div>
          <Link href={`/datasets/${execution.dataset_id}`} className="text-sm text-slate-500 hover:text-slate-800">
            ← {datasetName}
          </Link>
          <h1 className="mt-1 flex items-center gap-3 text-2xl font-semibold tracking-tight">
            Run #{execution.id} <ExecutionStatusBadge status={execution.status} />
          </h1>
          <p className="mt-1 text-sm text-slate-500">
            {scopeText(execution)} · {runMetricsText(execution, nameOf)} ·{" "}
            {madeBy ? (
              <span data-testid="run-made-by">
                made by {madeBy.href ? <Link href={madeBy.href} className="text-brand-700 hover:underline">{madeBy.text}</Link> : madeBy.text} ·{" "}
              </span>
            ) : null}
            <Link href={`/datasets/${execution.dataset_id}/executions`} className="text-brand-700 hover:underline">
              all runs
            </Link>
          </p>
        </div>
        <ExecutionActions
          execution={execution}
          onStarted={(e) => setNotice({ tone: "ok", text: `Started run #${e.id}.`, started: e.id })}
          onError={(e) => setNotice({ tone: "error", text: e instanceof ApiError && e.details.length ? `${e.message}: ${e.details.map((d) => `${d.path} ${d.message}`).join("; ")}` : e.message })}
        />
      </div>
      {notice ? (
        <p role={notice.tone === "error" ? "alert" : "status"} className={notice.tone === "error" ? "text-sm text-red-700" : "text-sm text-emerald-700"}>
          {notice.text}{" "}
          {notice.started ? (
            <Link href={`/executions/${notice.started}`} className="font-medium underline">
              Open it
            </Link>
          ) : null}
        </p>
      ) : null}

      <Card>
        <dl className="grid grid-cols-2 gap-4 px-5 py-4 sm:grid-cols-4 lg:grid-cols-8">
          <Fact label="Started">{formatDateTime(execution.started_at ?? execution.created_at)}</Fact>
          <Fact label="Duration">{running ? "running…" : formatDuration(execution.duration_ms)}</Fact>
          <Fact label="Mode">{execution.meta.execution_mode === "async" ? `async, batch ${execution.meta.batch_size}` : "sync"}</Fact>
          <Fact label="Model">{execution.meta.model ?? "metric's or default"}</Fact>
          <Fact label="Evaluations">{execution.total_evaluations}</Fact>
          <Fact label="Succeeded / failed">
            <span className="text-emerald-700">{execution.successful_evaluations}</span> /{" "}
            <span className={execution.failed_evaluations ? "text-red-700" : ""}>{execution.failed_evaluations}</span>
          </Fact>
          <Fact label="Tokens">
            {formatTokens(execution.meta.input_tokens)} in · {formatTokens(execution.meta.output_tokens)} out
          </Fact>
          <Fact label="Cost">{execution.meta.cost_usd == null ? "—" : `$${execution.meta.cost_usd.toFixed(4)}`}</Fact>
        </dl>
      </Card>

      {results.error ? <p role="alert" className="text-sm text-red-700">Could not load results: {results.error.message}</p> : null}

      <section aria-labelledby="aggregates-heading" className="space-y-3">
        <h2 id="aggregates-heading" className="text-lg font-semibold">
          Per-metric aggregates
        </h2>
        {results.isPending ? (
          <p className="text-sm text-slate-500">Loading results…</p>
        ) : aggregated.length === 0 ? (
          <p className="text-sm text-slate-500">No results yet.</p>
        ) : (
          <div className="grid gap-4 lg:grid-cols-2">
            {aggregated.map(([nodeId, agg]) => (
              <AggregateCard key={nodeId} nodeId={nodeId} metric={byId.get(Number(nodeId))} aggregated={agg} />
            ))}
          </div>
        )}
      </section>

      {errors.length ? (
        <Card>
          <CardHeader title="Errors" description={`${errors.length} evaluation${errors.length === 1 ? "" : "s"} failed`} />
          <Table aria-label="Errors">
            <thead>
              <tr>
                <Th>Metric</Th>
                <Th>Entity</Th>
                <Th>Message</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {errors.map((e, i) => (
                <tr key={i} data-testid="execution-error">
                  <Td className="whitespace-nowrap">{e.pipeline_node_id == null ? "All metrics" : nameOf(e.pipeline_node_id)}</Td>
                  <Td className="whitespace-nowrap text-xs text-slate-600">{e.entity_type ? `${e.entity_type} ${e.entity_id}` : "—"}</Td>
                  <Td className="break-words text-red-700">{e.message}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        </Card>
      ) : null}

      <Card>
        <CardHeader title="Individual results" description="Every cell this run evaluated" />
        <ResultsTable datasetId={execution.dataset_id} results={results.data?.results ?? []} metrics={metrics} />
      </Card>
    </div>
  );
}
