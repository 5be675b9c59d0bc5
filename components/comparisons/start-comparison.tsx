"use client";

import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import { Field } from "@/components/ui/field";
import { Select } from "@/components/ui/select";
import { ApiError, apiFetch } from "@/lib/client/api";
import type { Dataset } from "@/lib/schemas/datasets";
import type { Metric, MetricTemplate } from "@/lib/schemas/metrics";

type PairBy = "siblings" | "source_conversation";

/**
 * Start a comparison with a pairwise metric (POST /api/comparisons): the replies within this dataset
 * that answer the same message (a message tree), or this dataset against another by source conversation
 * (a generation and its source). Every pair is judged in both orders; the comparison's page follows it.
 */
export function StartComparison({ datasetId, metrics, initialMetricId }: { datasetId: number; metrics: Metric[]; initialMetricId: number | null }) {
  const router = useRouter();
  const [chosenId, setMetricId] = useState<number | null>(initialMetricId ?? metrics[0]?.id ?? null);
  // The metrics come from the server page: one added from a template arrives after the first render.
  const metricId = chosenId !== null && metrics.some((m) => m.id === chosenId) ? chosenId : (initialMetricId ?? metrics[0]?.id ?? null);
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

  if (metrics.length === 0) return <NoPairwiseMetric datasetId={datasetId} />;
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

/**
 * No pairwise metric yet: the built-in pairwise templates, each added in one click (the metric page edits it
 * later), besides how to write one. The grid's template library offers them too.
 */
function NoPairwiseMetric({ datasetId }: { datasetId: number }) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const templates = useQuery({
    queryKey: ["metric-templates"],
    queryFn: async () => (await apiFetch<MetricTemplate[]>("/metric-templates")).data,
  });
  const pairwise = (templates.data ?? []).filter((t) => t.output_type === "pairwise");
  const [adding, setAdding] = useState<number | null>(null);
  return (
    <div className="max-w-xl space-y-3 text-sm text-slate-600" data-testid="no-pairwise-metric">
      <p>
        This dataset has no pairwise metric yet. Add one from a template, or create one with the output type “A or B” and the variables @CANDIDATE_A and
        @CANDIDATE_B.
      </p>
      {templates.isPending ? <p className="text-slate-500">Loading templates…</p> : null}
      <ul className="space-y-2" aria-label="Pairwise templates">
        {pairwise.map((t) => (
          <li key={t.id} className="flex items-start gap-3 rounded-md border border-slate-200 bg-white px-3 py-2">
            <div className="flex-1">
              <div className="font-medium text-slate-800">{t.name}</div>
              <div className="text-xs text-slate-500">
                {t.evaluation_level === "message" ? "Message level: sibling replies to one message" : "Conversation level: two continuations of one conversation"} · {t.description}
              </div>
            </div>
            <Button
              size="sm"
              variant="secondary"
              needs="annotator"
              disabled={adding !== null}
              onClick={async () => {
                setAdding(t.id);
                setError(null);
                try {
                  const { data } = await apiFetch<Metric>("/evaluation-pipeline-nodes", { method: "POST", json: { dataset_id: datasetId, template_id: t.id } });
                  // The page is rendered on the server: the new address lists the new metric, chosen.
                  router.replace(`/datasets/${datasetId}/pairwise?metric=${data.id}`);
                } catch (err) {
                  setError(err instanceof Error ? err.message : String(err));
                  setAdding(null);
                }
              }}
            >
              {adding === t.id ? "Adding…" : `Add ${t.name}`}
            </Button>
          </li>
        ))}
      </ul>
      {error ? (
        <p role="alert" className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-red-800">
          {error}
        </p>
      ) : null}
    </div>
  );
}
