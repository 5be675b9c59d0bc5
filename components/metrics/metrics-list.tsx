"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useAccess } from "@/components/caller-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { Table, Td, Th } from "@/components/ui/table";
import { apiFetch } from "@/lib/client/api";
import type { Metric } from "@/lib/schemas/metrics";
import { levelLabels, outputTypeLabels } from "./labels";

/** A dataset's metrics in column order, with links to add and edit them and a delete action. */
export function MetricsList({ datasetId, initial }: { datasetId: number; initial: Metric[] }) {
  const queryClient = useQueryClient();
  const access = useAccess("annotator");
  const query = useQuery({
    queryKey: ["metrics", datasetId],
    queryFn: async () => (await apiFetch<Metric[]>(`/evaluation-pipeline-nodes?dataset_id=${datasetId}`)).data,
    initialData: initial,
  });
  const remove = useMutation({
    mutationFn: async (id: number) => apiFetch<null>(`/evaluation-pipeline-nodes/${id}`, { method: "DELETE" }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["metrics", datasetId] }),
  });
  const metrics = query.data ?? [];

  return (
    <Card>
      <CardHeader
        title="Metrics"
        description={metrics.length === 1 ? "1 metric, the grid's columns in order" : `${metrics.length} metrics, the grid's columns in order`}
        actions={
          access.allowed ? (
            <Link
              href={`/datasets/${datasetId}/metrics/new`}
              className="inline-flex h-8 items-center rounded-md bg-brand-600 px-3 text-sm font-medium text-white shadow-sm hover:bg-brand-700"
            >
              Add metric
            </Link>
          ) : (
            <span role="link" aria-disabled="true" title={access.why} className="inline-flex h-8 cursor-not-allowed items-center rounded-md bg-brand-600/50 px-3 text-sm font-medium text-white">
              Add metric
            </span>
          )
        }
      />
      {metrics.length === 0 ? (
        <p className="px-5 py-8 text-center text-sm text-slate-500">
          No metrics yet. Add one from the <Link href="/templates" className="text-brand-700 hover:underline">template library</Link> or write your own.
        </p>
      ) : (
        <Table aria-label="Metrics">
          <thead>
            <tr>
              <Th className="w-12">#</Th>
              <Th>Name</Th>
              <Th>Level</Th>
              <Th>Output</Th>
              <Th>Variables</Th>
              <Th className="text-right">
                <span className="sr-only">Actions</span>
              </Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {metrics.map((m) => (
              <tr key={m.id} data-testid="metric-row">
                <Td className="tabular-nums text-slate-500">{m.position + 1}</Td>
                <Td>
                  <Link href={`/datasets/${datasetId}/metrics/${m.id}`} className="font-medium text-brand-700 hover:underline">
                    {m.name}
                  </Link>
                  {m.description ? <p className="mt-0.5 line-clamp-2 text-xs text-slate-500">{m.description}</p> : null}
                </Td>
                <Td>
                  <Badge tone="brand">{levelLabels[m.evaluation_level]}</Badge>
                </Td>
                <Td className="whitespace-nowrap">{outputTypeLabels[m.output_type]}</Td>
                <Td className="max-w-xs">
                  {m.template_variables.length ? (
                    <span className="font-mono text-xs text-slate-600">{m.template_variables.join(" ")}</span>
                  ) : (
                    <span className="text-xs text-slate-500">Basic (default context)</span>
                  )}
                </Td>
                <Td className="text-right">
                  <Button
                    needs="annotator"
                    variant="ghost"
                    size="sm"
                    aria-label={`Delete metric ${m.name}`}
                    disabled={remove.isPending}
                    onClick={() => {
                      if (window.confirm(`Delete the metric “${m.name}” and all its results?`)) remove.mutate(m.id);
                    }}
                  >
                    Delete
                  </Button>
                </Td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {remove.error ? (
        <p role="alert" className="px-5 pb-4 text-sm text-red-600">
          {remove.error.message}
        </p>
      ) : null}
    </Card>
  );
}
