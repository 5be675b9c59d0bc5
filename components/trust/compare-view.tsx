"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { entityWords, useConversationLabels } from "@/components/conversation/use-conversation-labels";
import { useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader } from "@/components/ui/card";
import { Select } from "@/components/ui/select";
import { replaceQuery } from "@/lib/client/address";
import { apiFetch } from "@/lib/client/api";
import type { Comparison } from "@/lib/schemas/compare";
import type { Metric } from "@/lib/schemas/metrics";
import { cellHref, hasCells, type ExecutionSummary } from "./agreement-format";

const fmt = (x: number | null | undefined, digits = 3) => (x === null || x === undefined ? "—" : x.toFixed(digits));

function verdictText(side: Comparison["cells"][number]["a"]): string {
  if (!side) return "—";
  if (side.status === "failed") return "error";
  if (side.value === true) return "pass";
  if (side.value === false) return "fail";
  if (typeof side.value === "string") return side.value;
  return fmt(side.score, 2);
}

/**
 * Two runs of a dataset side by side: what changed (model, prompt version), tokens and cost of each,
 * per-metric agreement and flips, and every cell's two verdicts.
 */
export function CompareView({
  datasetId,
  metrics,
  initialA,
  initialB,
  initialOnlyFlips = false,
}: {
  datasetId: number;
  metrics: Metric[];
  initialA: number | null;
  initialB: number | null;
  initialOnlyFlips?: boolean;
}) {
  const executions = useQuery({
    queryKey: ["executions", datasetId],
    queryFn: async () => (await apiFetch<ExecutionSummary[]>(`/evaluation-pipeline-executions?dataset_id=${datasetId}&limit=100`)).data,
  });
  const [picked, setPicked] = useState<{ a: number | null; b: number | null }>({ a: initialA, b: initialB });
  const list = (executions.data ?? []).filter((e) => hasCells(e) || e.id === picked.a || e.id === picked.b);
  const [onlyFlips, setOnlyFlips] = useState(initialOnlyFlips);
  // Default: the two most recent runs that evaluated something, older as A.
  const a = picked.a ?? list[1]?.id ?? null;
  const b = picked.b ?? list[0]?.id ?? null;
  const comparison = useQuery({
    queryKey: ["compare", a, b],
    enabled: a !== null && b !== null,
    queryFn: async () => (await apiFetch<Comparison>(`/evaluation-pipeline-executions/compare?a=${a}&b=${b}`)).data,
  });
  const names = new Map(metrics.map((m) => [m.id, m.name]));
  const runSelect = (value: number | null, which: "a" | "b", label: string) => (
    <label className="text-sm">
      <span className="mb-1 block font-medium text-slate-700">{label}</span>
      <Select value={value ?? ""} aria-label={label} onChange={(e) => {
          const next = { a, b, [which]: Number(e.target.value) };
          setPicked(next);
          keepInUrl({ a: next.a, b: next.b, flips: onlyFlips });
        }}>
        {list.map((e) => (
          <option key={e.id} value={e.id}>
            Run #{e.id} · {e.meta.model ?? "default model"} · {e.status}
          </option>
        ))}
      </Select>
    </label>
  );
  const c = comparison.data;
  const cells = c ? c.cells.filter((x) => !onlyFlips || x.flip) : [];
  const labelOf = useConversationLabels(datasetId, cells.map((x) => x.conversation_id));
  if (executions.isSuccess && list.length < 2) return <p className="text-sm text-slate-500">Run the metrics at least twice to compare two runs.</p>;
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end gap-4">
        {runSelect(a, "a", "Run A")}
        {runSelect(b, "b", "Run B")}
        <label className="flex items-center gap-2 text-sm">
          <input type="checkbox" checked={onlyFlips} onChange={(e) => {
              setOnlyFlips(e.target.checked);
              setPicked({ a, b });
              keepInUrl({ a, b, flips: e.target.checked });
            }} />
          Only flips
        </label>
      </div>
      {comparison.error ? (
        <p role="alert" className="text-sm text-red-700">
          {comparison.error.message}
        </p>
      ) : null}
      {c ? (
        <>
          <Card>
            <CardHeader title="Runs" />
            <table className="w-full text-sm" data-testid="compare-runs">
              <thead className="text-left text-slate-500">
                <tr>
                  <th className="px-5 py-2 font-medium" />
                  <th className="px-5 py-2 font-medium">Models</th>
                  <th className="px-5 py-2 font-medium">Results</th>
                  <th className="px-5 py-2 font-medium">Tokens in / out</th>
                  <th className="px-5 py-2 font-medium">Cost</th>
                </tr>
              </thead>
              <tbody>
                {(["a", "b"] as const).map((k) => (
                  <tr key={k} className="border-t border-slate-100" data-run={k}>
                    <th className="px-5 py-2 text-left font-medium">
                      {k.toUpperCase()} · <Link href={`/executions/${c[k].id}`} className="text-brand-700 hover:underline">Run #{c[k].id}</Link>
                    </th>
                    <td className="px-5 py-2 font-mono" data-testid={`compare-models-${k}`}>
                      {c[k].models.join(", ") || c[k].model || "—"}
                    </td>
                    <td className="px-5 py-2">
                      {c[k].completed} completed, {c[k].failed} failed
                    </td>
                    <td className="px-5 py-2 font-mono">
                      {c[k].input_tokens.toLocaleString()} / {c[k].output_tokens.toLocaleString()}
                    </td>
                    <td className="px-5 py-2 font-mono">{c[k].cost_usd === null ? "no price" : `$${c[k].cost_usd.toFixed(4)}`}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Card>
          <Card>
            <CardHeader title="Per metric" description="Agreement of B with A on the cells both runs judged" />
            <table className="w-full text-sm" data-testid="compare-metrics">
              <thead className="text-left text-slate-500">
                <tr>
                  <th className="px-5 py-2 font-medium">Metric</th>
                  <th className="px-5 py-2 font-medium">What changed</th>
                  <th className="px-5 py-2 font-medium">n</th>
                  <th className="px-5 py-2 font-medium">Flips</th>
                  <th className="px-5 py-2 font-medium">Agreement</th>
                  <th className="px-5 py-2 font-medium">κ / ρ</th>
                  <th className="px-5 py-2 font-medium">Mean Δ</th>
                </tr>
              </thead>
              <tbody>
                {c.metrics.map((m) => (
                  <tr key={m.pipeline_node_id} className="border-t border-slate-100" data-metric={m.pipeline_node_id}>
                    <td className="px-5 py-2 font-medium">{m.name}</td>
                    <td className="px-5 py-2" data-testid="compare-changed">
                      {m.changed.length === 0 ? <span className="text-slate-500">nothing</span> : null}
                      {m.changed.includes("model") ? (
                        <span className="mr-2">
                          <Badge tone="brand">model</Badge> {m.models.a.join(", ") || "—"} → {m.models.b.join(", ") || "—"}
                        </span>
                      ) : null}
                      {m.changed.includes("prompt") ? (
                        <span>
                          <Badge tone="warning">prompt</Badge> v{m.prompt_version.a?.version ?? "?"} → v{m.prompt_version.b?.version ?? "?"}
                        </span>
                      ) : null}
                    </td>
                    <td className="px-5 py-2 font-mono">{m.n}</td>
                    <td className="px-5 py-2 font-mono" data-testid="compare-flips">
                      {m.flips}
                    </td>
                    <td className="px-5 py-2 font-mono">{fmt(m.accuracy)}</td>
                    <td className="px-5 py-2 font-mono">{fmt(m.kappa ?? m.spearman)}</td>
                    <td className="px-5 py-2 font-mono">{fmt(m.mean_delta)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Card>
          <Card>
            <CardHeader title="Cells" description={`${cells.length} shown`} />
            <table className="w-full text-sm" data-testid="compare-cells">
              <thead className="text-left text-slate-500">
                <tr>
                  <th className="px-5 py-2 font-medium">Metric</th>
                  <th className="px-5 py-2 font-medium">Cell</th>
                  <th className="px-5 py-2 font-medium">A</th>
                  <th className="px-5 py-2 font-medium">B</th>
                  <th className="px-5 py-2 font-medium">Δ</th>
                </tr>
              </thead>
              <tbody>
                {cells.map((x) => (
                  <tr
                    key={`${x.pipeline_node_id}:${x.entity_type}:${x.entity_id}`}
                    className={`border-t border-slate-100 ${x.flip ? "bg-amber-50" : ""}`}
                    data-testid="compare-cell"
                    data-flip={x.flip}
                  >
                    <td className="px-5 py-1.5">{names.get(x.pipeline_node_id) ?? `#${x.pipeline_node_id}`}</td>
                    <td className="px-5 py-1.5">
                      <Link href={cellHref(datasetId, x)} className="text-brand-700 hover:underline">
                        {entityWords(x, labelOf)}
                      </Link>
                    </td>
                    <td className="px-5 py-1.5 font-mono">{verdictText(x.a)}</td>
                    <td className="px-5 py-1.5 font-mono">{verdictText(x.b)}</td>
                    <td className="px-5 py-1.5 font-mono">{x.delta === null ? "" : x.delta.toFixed(2)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Card>
        </>
      ) : null}
    </div>
  );
}

/** The runs compared and the flips-only choice in the address, so a reload or a shared link shows the same comparison. */
function keepInUrl(choice: { a: number | null; b: number | null; flips: boolean }) {
  replaceQuery({ a: choice.a === null ? null : String(choice.a), b: choice.b === null ? null : String(choice.b), flips: choice.flips ? "1" : null });
}
