"use client";

import { useMemo, useState } from "react";
import { Button } from "@/components/ui/button";
import { Select } from "@/components/ui/select";
import { Table, Td, Th } from "@/components/ui/table";
import { formatDuration, reasoningOf } from "@/components/results/format";
import { ResultValue } from "@/components/results/result-value";
import { entityWords, useConversationLabels } from "@/components/conversation/use-conversation-labels";
import type { IndividualResult } from "@/lib/schemas/executions";
import type { Metric } from "@/lib/schemas/metrics";

const PAGE_SIZE = 50;


/** Every individual result of a run, filterable by metric and status, a page at a time. */
export function ResultsTable({ datasetId, results, metrics }: { datasetId: number; results: IndividualResult[]; metrics: Metric[] }) {
  const [metric, setMetric] = useState("");
  const [status, setStatus] = useState("");
  const [page, setPage] = useState(0);
  const byId = useMemo(() => new Map(metrics.map((m) => [m.id, m])), [metrics]);
  const nodeIds = useMemo(() => [...new Set(results.map((r) => r.pipeline_node_id))], [results]);
  const filtered = useMemo(
    () => results.filter((r) => (!metric || String(r.pipeline_node_id) === metric) && (!status || r.status === status)),
    [results, metric, status],
  );
  const pages = Math.max(1, Math.ceil(filtered.length / PAGE_SIZE));
  const current = Math.min(page, pages - 1);
  const shown = filtered.slice(current * PAGE_SIZE, (current + 1) * PAGE_SIZE);
  const labelOf = useConversationLabels(datasetId, shown.map((r) => r.conversation_id));

  return (
    <div>
      <div className="flex flex-wrap items-center gap-3 border-b border-slate-200 px-5 py-3">
        <div className="w-56">
          <Select
            aria-label="Filter results by metric"
            value={metric}
            className="h-9"
            onChange={(e) => {
              setMetric(e.target.value);
              setPage(0);
            }}
          >
            <option value="">Every metric</option>
            {nodeIds.map((id) => (
              <option key={id} value={id}>
                {byId.get(id)?.name ?? `Metric ${id}`}
              </option>
            ))}
          </Select>
        </div>
        <div className="w-40">
          <Select
            aria-label="Filter results by status"
            value={status}
            className="h-9"
            onChange={(e) => {
              setStatus(e.target.value);
              setPage(0);
            }}
          >
            <option value="">Any status</option>
            <option value="completed">completed</option>
            <option value="failed">failed</option>
          </Select>
        </div>
        <span className="text-sm text-slate-500">{filtered.length.toLocaleString()} results</span>
      </div>
      {shown.length === 0 ? (
        <p className="px-5 py-8 text-center text-sm text-slate-500">No results{results.length ? " match these filters" : " yet"}.</p>
      ) : (
        <Table aria-label="Individual results">
          <thead>
            <tr>
              <Th>Entity</Th>
              <Th>Metric</Th>
              <Th className="w-56">Result</Th>
              <Th>Reasoning / error</Th>
              <Th className="text-right">Time</Th>
              <Th className="text-right">Tokens</Th>
              <Th>Model</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {shown.map((r) => {
              const m = byId.get(r.pipeline_node_id);
              const note = r.status === "failed" ? r.error : reasoningOf(r.result);
              return (
                <tr key={r.id} data-testid="result-row" data-status={r.status}>
                  <Td className="whitespace-nowrap text-xs text-slate-600">{entityWords(r, labelOf)}</Td>
                  <Td className="whitespace-nowrap">{m?.name ?? `Metric ${r.pipeline_node_id}`}</Td>
                  <Td>
                    {r.status === "failed" ? (
                      <span className="text-xs font-medium text-red-700">⚠ failed</span>
                    ) : m ? (
                      <div className="flex h-6 w-52 items-center">
                        <ResultValue type={m.output_type} result={r.result} />
                      </div>
                    ) : (
                      <span className="font-mono text-xs">{JSON.stringify(r.result)}</span>
                    )}
                  </Td>
                  <Td className={r.status === "failed" ? "max-w-md text-red-700" : "max-w-md text-slate-600"}>
                    <p className="line-clamp-2 break-words" title={note ?? undefined}>
                      {note ?? "—"}
                    </p>
                  </Td>
                  <Td className="whitespace-nowrap text-right tabular-nums text-slate-600">{formatDuration(r.execution_time)}</Td>
                  <Td className="whitespace-nowrap text-right tabular-nums text-slate-600">
                    {r.input_tokens}/{r.output_tokens}
                    {r.cached ? <span className="block text-xs text-slate-400">cached</span> : null}
                  </Td>
                  <Td className="whitespace-nowrap text-xs text-slate-600">{r.model_name ?? "—"}</Td>
                </tr>
              );
            })}
          </tbody>
        </Table>
      )}
      {pages > 1 ? (
        <div className="flex items-center justify-between border-t border-slate-200 px-5 py-3 text-sm text-slate-600">
          <span>
            Page {current + 1} of {pages}
          </span>
          <div className="flex gap-2">
            <Button variant="secondary" size="sm" disabled={current === 0} onClick={() => setPage(current - 1)}>
              Previous
            </Button>
            <Button variant="secondary" size="sm" disabled={current >= pages - 1} onClick={() => setPage(current + 1)}>
              Next
            </Button>
          </div>
        </div>
      ) : null}
    </div>
  );
}
