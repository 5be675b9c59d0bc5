"use client";

import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import { Field } from "@/components/ui/field";
import { Select } from "@/components/ui/select";
import { ApiError, apiFetch } from "@/lib/client/api";
import type { Dataset } from "@/lib/schemas/datasets";
import type { Metric } from "@/lib/schemas/metrics";

type PairBy = "siblings" | "source_conversation";

/**
 * Start a comparison with a pairwise metric (POST /api/comparisons): the replies within this dataset
 * that answer the same message (a message tree), or this dataset against another by source conversation
 * (a generation and its source). Every pair is judged in both orders; the comparison's page follows it.
 */
export function StartComparison({ datasetId, metrics, initialMetricId }: { datasetId: number; metrics: Metric[]; initialMetricId: number | null }) {
  const router = useRouter();
  const [metricId, setMetricId] = useState<number | null>(initialMetricId ?? metrics[0]?.id ?? null);
  const [pairBy, setPairBy] = useState<PairBy>("siblings");
  const [other, setOther] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const datasets = useQuery({
    queryKey: ["datasets", "all"],
    queryFn: async () => (await apiFetch<Dataset[]>("/datasets?limit=500")).data,
  });
  const others = (datasets.data ?? []).filter((d) => d.id !== datasetId);
  const detail = (path: string) => (error instanceof ApiError ? error.details.find((d) => d.path === path)?.message : undefined);

  if (metrics.length === 0) {
    return (
      <p className="text-sm text-slate-600" data-testid="no-pairwise-metric">
        This dataset has no pairwise metric. Create one with the output type “A or B” and the variables @CANDIDATE_A and @CANDIDATE_B.
      </p>
    );
  }
  return (
    <form
      aria-label="Start a comparison"
      className="max-w-xl space-y-4"
      onSubmit={async (e) => {
        e.preventDefault();
        if (metricId === null) return;
        setBusy(true);
        setError(null);
        try {
          const body = {
            pipeline_node_id: metricId,
            a: `dataset:${datasetId}`,
            pair_by: pairBy,
            ...(pairBy === "source_conversation" && other !== null ? { b: `dataset:${other}` } : {}),
          };
          const { data } = await apiFetch<{ id: number }>("/comparisons", { method: "POST", json: body });
          router.push(`/comparisons/${data.id}`);
        } catch (err) {
          setError(err instanceof Error ? err : new Error(String(err)));
          setBusy(false);
        }
      }}
    >
      <Field id="pairwise-metric" label="Pairwise metric" error={detail("pipeline_node_id")}>
        <Select id="pairwise-metric" value={metricId ?? ""} onChange={(e) => setMetricId(Number(e.target.value))}>
          {metrics.map((m) => (
            <option key={m.id} value={m.id}>
              {m.name}
            </option>
          ))}
        </Select>
      </Field>
      <fieldset className="space-y-2">
        <legend className="text-sm font-medium text-slate-700">Which replies</legend>
        <label className="flex items-start gap-2 text-sm">
          <input type="radio" name="pair-by" checked={pairBy === "siblings"} onChange={() => setPairBy("siblings")} className="mt-1" />
          <span>
            <span className="font-medium">Sibling replies in this dataset</span>
            <span className="block text-xs text-slate-500">Replies that answer the same message, as in a message tree (meta.parent_id).</span>
          </span>
        </label>
        <label className="flex items-start gap-2 text-sm">
          <input type="radio" name="pair-by" checked={pairBy === "source_conversation"} onChange={() => setPairBy("source_conversation")} className="mt-1" />
          <span>
            <span className="font-medium">This dataset against another, by source conversation</span>
            <span className="block text-xs text-slate-500">A generated dataset and the one it was generated from (meta.source_conversation_id).</span>
          </span>
        </label>
      </fieldset>
      {pairBy === "source_conversation" ? (
        <Field id="pairwise-other" label="Other dataset (B)" error={detail("b")}>
          <Select id="pairwise-other" value={other ?? ""} onChange={(e) => setOther(e.target.value ? Number(e.target.value) : null)}>
            <option value="">Choose a dataset…</option>
            {others.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name} ({d.conversation_count} conversations)
              </option>
            ))}
          </Select>
        </Field>
      ) : null}
      {error ? (
        <p role="alert" className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800" data-testid="comparison-error">
          {error.message}
        </p>
      ) : null}
      <Button type="submit" needs="annotator" disabled={busy || metricId === null || (pairBy === "source_conversation" && other === null)}>
        {busy ? "Starting…" : "Judge every pair in both orders"}
      </Button>
    </form>
  );
}
