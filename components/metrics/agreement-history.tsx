"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { ApiError, apiFetch } from "@/lib/client/api";
import type { AgreementHistory as AgreementHistoryReport } from "@/lib/labels/agreement-history";
import type { Metric } from "@/lib/schemas/metrics";

/** The wire shape of GET /evaluation-pipeline-nodes/{id}/agreement-history (a type only: nothing of the server's code comes along). */
type History = AgreementHistoryReport;

const fmt = (x: number | null) => (x === null ? "—" : x.toFixed(3));

/**
 * The metric's agreement with the truth per prompt version (a change of prompt or model is a new version,
 * scored by the runs made while it was in effect), each version's prompt a click away and usable again.
 */
export function AgreementHistory({ metric }: { metric: Metric }) {
  const router = useRouter();
  const client = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const history = useQuery({
    queryKey: ["agreement-history", metric.id, metric.prompt, metric.model_name],
    queryFn: async () => (await apiFetch<History>(`/evaluation-pipeline-nodes/${metric.id}/agreement-history`)).data,
  });
  const restore = useMutation({
    mutationFn: async (prompt: string) => (await apiFetch<Metric>(`/evaluation-pipeline-nodes/${metric.id}`, { method: "PATCH", json: { prompt } })).data,
    onSuccess: async () => {
      setError(null);
      await client.invalidateQueries({ queryKey: ["agreement-history", metric.id] });
      router.refresh();
    },
    onError: (e) => setError(e instanceof ApiError ? e.message : String(e)),
  });
  const versions = history.data?.versions ?? [];
  if (metric.kind === "check") return null;
  return (
    <Card data-testid="agreement-history">
      <CardHeader
        title="Agreement history"
        description={`κ with ${history.data?.truth === "reference" ? "the reference" : "people's labels"} per prompt version, from the runs made while it was in effect · 95% intervals`}
      />
      {versions.length === 0 ? (
        <p className="px-5 py-3 text-sm text-slate-500">{history.isLoading ? "Loading…" : "No version saved yet."}</p>
      ) : (
        <table className="w-full text-sm">
          <thead>
            <tr className="text-left text-xs text-slate-500">
              <th className="px-5 py-2 font-medium">Version</th>
              <th className="px-5 py-2 font-medium">Saved</th>
              <th className="px-5 py-2 font-medium">Cells judged</th>
              <th className="px-5 py-2 font-medium">Cohen&apos;s κ</th>
              <th className="px-5 py-2 font-medium">Prompt</th>
            </tr>
          </thead>
          <tbody>
            {[...versions].reverse().map((v) => {
              const current = v.prompt === metric.prompt && v.version === versions.at(-1)?.version;
              return (
                <tr key={v.version} className="border-t border-slate-100 align-top" data-testid={`history-version-${v.version}`}>
                  <td className="px-5 py-2 font-mono">
                    {v.version}
                    {current ? <span className="ml-2 text-xs text-emerald-700">current</span> : null}
                  </td>
                  <td className="px-5 py-2 text-slate-600">{v.created_at.replace("T", " ").slice(0, 16)}</td>
                  <td className="px-5 py-2 font-mono">{v.n}</td>
                  <td className="px-5 py-2 font-mono" data-testid="history-kappa">
                    {v.n ? fmt(v.kappa) : "not run"}
                    {v.kappa_interval ? <span className="ml-2 text-xs text-slate-500">[{fmt(v.kappa_interval[0])}, {fmt(v.kappa_interval[1])}]</span> : null}
                    {v.aligned ? (
                      <div className="mt-1 text-xs text-slate-600" data-testid="history-aligned">
                        held out in alignment #{v.aligned.alignment_id} ({v.aligned.strategy.replace("_", "-")}): {fmt(v.aligned.kappa)}
                        {v.aligned.kappa_interval ? ` [${fmt(v.aligned.kappa_interval[0])}, ${fmt(v.aligned.kappa_interval[1])}]` : ""} vs {fmt(v.aligned.baseline_kappa)} before
                      </div>
                    ) : null}
                  </td>
                  <td className="px-5 py-2">
                    <details>
                      <summary className="cursor-pointer text-slate-700">Show prompt</summary>
                      <pre className="mt-1 max-h-64 overflow-auto whitespace-pre-wrap rounded bg-slate-50 p-2 font-mono text-xs">{v.prompt}</pre>
                      {!current ? (
                        <Button size="sm" variant="secondary" needs="annotator" className="mt-2" disabled={restore.isPending} onClick={() => restore.mutate(v.prompt)}>
                          Use version {v.version}&apos;s prompt again
                        </Button>
                      ) : null}
                    </details>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {error ? <p role="alert" className="px-5 pb-3 text-sm text-red-700">{error}</p> : null}
    </Card>
  );
}
