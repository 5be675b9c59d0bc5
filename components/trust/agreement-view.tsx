"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { entityWords, useConversationLabels } from "@/components/conversation/use-conversation-labels";
import { useEffect, useState } from "react";
import { Bar, BarChart, CartesianGrid, ErrorBar, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { Card, CardHeader } from "@/components/ui/card";
import { Select } from "@/components/ui/select";
import { apiFetch } from "@/lib/client/api";
import type { Agreement, AnnotatorAgreement } from "@/lib/schemas/labels";
import type { Metric } from "@/lib/schemas/metrics";
import { cellHref, fmt, hasCells, sourceLabel, type EntityRef, type ExecutionSummary } from "./agreement-format";
import { AlignPanel } from "./align-panel";
import { AnnotatorsPanel } from "./annotators-panel";
import { RankingPanel, type Ranking } from "./ranking-panel";



const figureNames = { accuracy: "Accuracy", kappa: "Cohen's κ", spearman: "Spearman ρ", mae: "MAE" } as const;

const intervalKinds = {
  accuracy: "Wilson score",
  kappa: "± 1.96 SE",
  spearman: "Fisher z",
  mae: "± 1.96 s/√n",
} as const;



/**
 * Agreement of a metric between two sources (runs, the grid's latest results, human labels, the
 * reference): the figures with their 95% intervals, a chart, and the confusion matrix whose false-pass
 * and false-fail cells list the conversations.
 */
export type AgreementChoice = { a?: string; b?: string; compare?: "scores" | "passfail"; threshold?: string; tolerance?: string };

/** The page's choices as its address's search params (so a link or a reload shows the same comparison). */
export function agreementSearch(c: { metric: number } & AgreementChoice): string {
  const q = new URLSearchParams({ metric: String(c.metric) });
  if (c.a) q.set("a", c.a);
  if (c.b) q.set("b", c.b);
  if (c.compare) q.set("compare", c.compare === "passfail" ? "pass_fail" : "scores");
  if (c.compare === "passfail" && c.threshold) q.set("threshold", c.threshold);
  if (c.compare === "scores" && c.tolerance) q.set("tolerance", c.tolerance);
  return q.toString();
}

export function AgreementView({ datasetId, metrics, initialMetricId, initial = {} }: { datasetId: number; metrics: Metric[]; initialMetricId: number | null; initial?: AgreementChoice }) {
  const [metricId, setMetricId] = useState(initialMetricId ?? metrics[0]?.id ?? 0);
  const metric = metrics.find((m) => m.id === metricId) ?? null;
  const [a, setA] = useState(initial.a ?? "latest");
  const [b, setB] = useState(initial.b ?? (metric?.reference ? "reference" : "labels"));
  const score = metric !== null && metric.output_type !== "checkbox" && metric.output_type !== "text";
  // Score metrics: by default as the readings are (pass/fail labels → pass/fail at the metric's threshold,
  // decided by the server and shown); or as asked: scores within a tolerance, pass/fail at a threshold.
  const [mode, setMode] = useState<"auto" | "scores" | "passfail">(initial.compare ?? "auto");
  const [threshold, setThreshold] = useState(initial.threshold ?? "0.5");
  const [tolerance, setTolerance] = useState(initial.tolerance ?? (metric?.output_type === "progress" ? "0.1" : "0"));
  const scoreParams = !score || mode === "auto" ? "" : mode === "passfail" ? `&compare=pass_fail&threshold=${encodeURIComponent(threshold)}` : `&compare=scores&tolerance=${encodeURIComponent(tolerance)}`;
  // The choice is kept in the address: a reload, a link or Back shows the same comparison.
  useEffect(() => {
    const search = agreementSearch({ metric: metricId, a, b, ...(score && mode !== "auto" ? { compare: mode, threshold, tolerance } : {}) });
    if (window.location.search.slice(1) !== search) window.history.replaceState(window.history.state, "", `${window.location.pathname}?${search}`);
  }, [metricId, a, b, score, mode, threshold, tolerance]);

  const executions = useQuery({
    queryKey: ["executions", datasetId],
    queryFn: async () => (await apiFetch<ExecutionSummary[]>(`/evaluation-pipeline-executions?dataset_id=${datasetId}&limit=100`)).data,
  });
  const agreement = useQuery({
    queryKey: ["agreement", datasetId, metricId, a, b, scoreParams],
    enabled: metric !== null,
    queryFn: async () =>
      (await apiFetch<Agreement>(`/agreement?dataset_id=${datasetId}&pipeline_node_id=${metricId}&a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}${scoreParams}`)).data,
    refetchOnWindowFocus: true,
  });
  const annotators = useQuery({
    queryKey: ["agreement-annotators", datasetId, metricId, scoreParams],
    enabled: metric !== null,
    queryFn: async () => (await apiFetch<AnnotatorAgreement>(`/agreement/annotators?dataset_id=${datasetId}&pipeline_node_id=${metricId}${scoreParams}`)).data,
  });
  // A pass/fail source (a reference with a rule) is compared at a threshold whatever the mode asked, and
  // by default the server compares as the readings are: the controls show what was done.
  const passFailSource = mode === "scores" && agreement.data?.threshold != null;
  const shownMode = mode === "auto" ? (agreement.data?.compared_as === "pass_fail" ? "passfail" : "scores") : passFailSource ? "passfail" : mode;
  const rankingSource = a === "latest" || a.startsWith("execution:") ? a : "latest";
  const ranking = useQuery({
    queryKey: ["ranking", datasetId, metricId, rankingSource],
    enabled: metric !== null && metric.evaluation_level === "message" && metric.output_type !== "text",
    queryFn: async () => (await apiFetch<Ranking>(`/agreement/ranking?dataset_id=${datasetId}&pipeline_node_id=${metricId}&a=${encodeURIComponent(rankingSource)}`)).data,
  });

  const sources = [
    "latest",
    "labels",
    ...(annotators.data?.annotators ?? []).filter((p) => p.labelled > 0).map((p) => `labels:${p.user_id}`),
    ...(metric?.reference ? ["reference"] : []),
    // A run that evaluated nothing (n = 0) reads no cell: not a source.
    ...(executions.data ?? []).filter((e) => hasCells(e) || `execution:${e.id}` === a || `execution:${e.id}` === b).map((e) => `execution:${e.id}`),
  ];
  const sourceSelect = (value: string, onChange: (v: string) => void, name: string) => (
    <label className="text-sm">
      <span className="mb-1 block font-medium text-slate-700">{name}</span>
      <Select value={value} onChange={(e) => onChange(e.target.value)} aria-label={name}>
        {sources.map((s) => (
          <option key={s} value={s}>
            {sourceLabel(s)}
            {s.startsWith("execution:") ? ` · ${executions.data?.find((e) => `execution:${e.id}` === s)?.meta.model ?? "default model"}` : ""}
          </option>
        ))}
      </Select>
    </label>
  );

  if (!metric) return <p className="text-sm text-slate-500">This dataset has no metrics yet.</p>;
  const d = agreement.data;
  const chart = d
    ? (Object.keys(figureNames) as Array<keyof typeof figureNames>)
        .filter((k) => d[k] !== null && k !== "mae")
        .map((k) => {
          const value = d[k] as number;
          const iv = d.intervals[k];
          return { name: figureNames[k], value, error: iv ? [value - iv[0], iv[1] - value] : [0, 0] };
        })
    : [];
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end gap-4">
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Metric</span>
          <Select
            value={metricId}
            onChange={(e) => {
              const next = metrics.find((m) => m.id === Number(e.target.value));
              setMetricId(Number(e.target.value));
              if (b === "reference" && !next?.reference) setB("labels");
            }}
            aria-label="Metric"
          >
            {metrics.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name}
              </option>
            ))}
          </Select>
        </label>
        {sourceSelect(a, setA, "Source A (judged)")}
        {sourceSelect(b, setB, "Source B (truth)")}
        {score ? (
          <fieldset className="flex items-end gap-3 text-sm" data-mode={shownMode}>
            <legend className="sr-only">How scores are compared</legend>
            <label>
              <span className="mb-1 block font-medium text-slate-700">Compare scores</span>
              <Select
                value={shownMode}
                onChange={(e) => {
                  const next = e.target.value as "scores" | "passfail";
                  if (next === "passfail" && mode === "auto" && agreement.data?.threshold != null) setThreshold(String(agreement.data.threshold));
                  setMode(next);
                }}
                aria-label="Compare scores"
              >
                <option value="scores" disabled={passFailSource}>
                  {passFailSource ? "as scores (not against a pass/fail source)" : "as scores, within a tolerance"}
                </option>
                <option value="passfail">as pass/fail at a threshold</option>
              </Select>
            </label>
            {shownMode === "scores" ? (
              <label>
                <span className="mb-1 block font-medium text-slate-700">Tolerance</span>
                <input
                  type="number"
                  min={0}
                  step={0.05}
                  value={tolerance}
                  onChange={(e) => {
                    setMode("scores");
                    setTolerance(e.target.value);
                  }}
                  aria-label="Tolerance"
                  className="h-10 w-24 rounded-md border border-slate-300 px-3 text-sm"
                />
              </label>
            ) : (
              <label>
                <span className="mb-1 block font-medium text-slate-700">Pass at score ≥</span>
                <input
                  type="number"
                  step={0.05}
                  value={passFailSource || (mode === "auto" && agreement.data?.threshold != null) ? String(agreement.data?.threshold) : threshold}
                  onChange={(e) => {
                    setMode("passfail");
                    setThreshold(e.target.value);
                  }}
                  aria-label="Threshold"
                  className="h-10 w-24 rounded-md border border-slate-300 px-3 text-sm"
                />
              </label>
            )}
          </fieldset>
        ) : null}
        <Link href={`/datasets/${datasetId}/review?metric=${metricId}`} className="text-sm font-medium text-brand-700 hover:underline">
          Review queue →
        </Link>
      </div>
      {agreement.error ? (
        <p role="alert" className="text-sm text-red-700">
          {agreement.error.message}
        </p>
      ) : null}
      {d ? (
        <div className="grid gap-4 lg:grid-cols-2">
          <Card>
            <CardHeader
              title="Figures"
              description={`${d.n} cells read by both sources · 95% intervals${d.threshold !== null ? ` · pass at score ≥ ${d.threshold}` : ""}${d.tolerance !== null && d.kind === "score" && d.threshold === null ? ` · scores agree within ${d.tolerance}` : ""}`}
            />
            <table className="w-full text-sm" data-testid="agreement-figures">
              <tbody>
                <tr className="border-b border-slate-100">
                  <th className="px-5 py-2 text-left font-medium text-slate-600">n</th>
                  <td className="px-5 py-2 font-mono" data-testid="agreement-n">
                    {d.n}
                  </td>
                  <td />
                </tr>
                {(Object.keys(figureNames) as Array<keyof typeof figureNames>).map((k) => (
                  <tr key={k} className="border-b border-slate-100" data-figure={k}>
                    <th className="px-5 py-2 text-left font-medium text-slate-600">{figureNames[k]}</th>
                    <td className="px-5 py-2 font-mono" data-testid={`agreement-${k}`}>
                      {fmt(d[k])}
                    </td>
                    <td className="px-5 py-2 text-xs text-slate-500">
                      {d.intervals[k] ? `[${fmt(d.intervals[k]![0])}, ${fmt(d.intervals[k]![1])}] ${intervalKinds[k]}` : d[k] === null ? <span data-testid={`agreement-${k}-why`}>{undefinedWhy(d, k)}</span> : ""}
                    </td>
                  </tr>
                ))}
                {d.weighted_kappa !== null ? (
                  <tr className="border-b border-slate-100" data-figure="weighted_kappa">
                    <th className="px-5 py-2 text-left font-medium text-slate-600">Weighted κ (quadratic)</th>
                    <td className="px-5 py-2 font-mono" data-testid="agreement-weighted_kappa">
                      {fmt(d.weighted_kappa)}
                    </td>
                    <td className="px-5 py-2 text-xs text-slate-500">weights ((x−y)/range)²</td>
                  </tr>
                ) : null}
              </tbody>
            </table>
            {chart.length ? (
              <figure className="h-48 w-full px-3 py-3" aria-label="Agreement chart" data-testid="agreement-chart">
                <ResponsiveContainer width="100%" height="100%">
                  <BarChart data={chart} margin={{ top: 8, right: 8, bottom: 0, left: -20 }}>
                    <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e2e8f0" />
                    <XAxis dataKey="name" tick={{ fontSize: 11, fill: "#64748b" }} />
                    <YAxis domain={[-1, 1]} tick={{ fontSize: 11, fill: "#64748b" }} />
                    <Tooltip formatter={(v) => [typeof v === "number" ? v.toFixed(3) : String(v), "value"]} />
                    <Bar dataKey="value" fill="#4f6ef7" isAnimationActive={false}>
                      <ErrorBar dataKey="error" width={6} stroke="#0f172a" />
                    </Bar>
                  </BarChart>
                </ResponsiveContainer>
              </figure>
            ) : null}
          </Card>
          {d.confusion ? <ConfusionMatrix datasetId={datasetId} agreement={d} /> : null}
          <Disagreements datasetId={datasetId} agreement={d} />
        </div>
      ) : agreement.isPending ? (
        <p className="text-sm text-slate-500">Computing…</p>
      ) : null}
      {annotators.data && annotators.data.annotators.some((p) => p.labelled > 0) ? <AnnotatorsPanel data={annotators.data} /> : null}
      {metric.kind !== "check" ? <AlignPanel key={metric.id} metric={metric} /> : null}
      {ranking.data && ranking.data.groups > 0 ? <RankingPanel datasetId={datasetId} ranking={ranking.data} source={rankingSource} /> : null}
    </div>
  );
}

/** Why a figure reads "—": said beside it, so an undefined figure is not mistaken for a missing one. */
function undefinedWhy(d: Agreement, k: keyof typeof figureNames): string {
  if (d.n === 0) return "no cell read by both sources";
  if ((k === "spearman" || k === "mae") && d.kind !== "score") return "for scores only";
  if (k === "spearman") return d.n < 2 ? "needs two cells or more" : "undefined: one source gave every cell the same score, so there is no order to correlate";
  if (k === "kappa") {
    if (d.kind === "score" && d.threshold === null) return "compare as pass/fail at a threshold for κ (weighted κ below is for scores)";
    return "undefined: both sources gave one and the same verdict throughout (chance agreement is 1)";
  }
  return "";
}

const showReading = (v: unknown) => (typeof v === "number" ? v.toFixed(2) : typeof v === "boolean" ? (v ? "pass" : "fail") : String(v));

/** The cells the two sources disagree on, worst first, each opening in the grid. */
function Disagreements({ datasetId, agreement }: { datasetId: number; agreement: Agreement }) {
  const rows = agreement.disagreements.slice(0, 50);
  const labelOf = useConversationLabels(datasetId, rows.map((r) => r.conversation_id));
  return (
    <Card className="lg:col-span-2">
      <CardHeader title="Disagreements" description={`${agreement.disagreements.length} cell${agreement.disagreements.length === 1 ? "" : "s"}${agreement.disagreements.length > rows.length ? `, the ${rows.length} furthest apart shown` : ""}`} />
      {rows.length ? (
        <table className="w-full text-sm" data-testid="disagreements">
          <thead>
            <tr className="text-left text-xs text-slate-500">
              <th className="px-5 py-2 font-medium">Cell</th>
              <th className="px-5 py-2 font-medium">{sourceLabel(agreement.a)}</th>
              <th className="px-5 py-2 font-medium">{sourceLabel(agreement.b)}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.entity_type}:${r.entity_id}`} className="border-t border-slate-100">
                <td className="px-5 py-1.5">
                  <Link href={cellHref(datasetId, r)} className="text-brand-700 hover:underline">
                    {entityWords(r, labelOf)}
                  </Link>
                </td>
                <td className="px-5 py-1.5 font-mono">{showReading(r.a)}</td>
                <td className="px-5 py-1.5 font-mono">{showReading(r.b)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : agreement.n === 0 ? (
        <p className="px-5 py-3 text-sm text-slate-500" data-testid="agreement-nothing-to-compare">
          No cell has a reading from both sources, so there is nothing to compare yet.
        </p>
      ) : (
        <p className="px-5 py-3 text-sm text-slate-500">The two sources agree on every cell.</p>
      )}
    </Card>
  );
}

function ConfusionMatrix({ datasetId, agreement }: { datasetId: number; agreement: Agreement }) {
  const c = agreement.confusion!;
  const binary = c.labels.length === 2 && c.labels[0] === "pass";
  const listed = (row: number, col: number): EntityRef[] => {
    if (!binary) return [];
    if (row === 0 && col === 1) return c.false_pass;
    if (row === 1 && col === 0) return c.false_fail;
    return [];
  };
  return (
    <Card>
      <CardHeader title="Confusion matrix" description={`Rows: ${sourceLabel(agreement.a)} · columns: ${sourceLabel(agreement.b)}`} />
      <table className="w-full text-sm" data-testid="confusion-matrix">
        <thead>
          <tr>
            <th />
            {c.labels.map((l) => (
              <th key={l} className="px-4 py-2 text-left font-medium text-slate-600">
                B {l}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {c.labels.map((rowLabel, i) => (
            <tr key={rowLabel} className="border-t border-slate-100 align-top">
              <th className="px-4 py-2 text-left font-medium text-slate-600">A {rowLabel}</th>
              {c.labels.map((colLabel, j) => {
                const cells = listed(i, j);
                const name = binary && i === 0 && j === 1 ? "false-pass" : binary && i === 1 && j === 0 ? "false-fail" : `${rowLabel}-${colLabel}`;
                return (
                  <td key={colLabel} className={`px-4 py-2 ${i === j ? "bg-emerald-50" : "bg-amber-50"}`} data-testid={`confusion-${name}`}>
                    <span className="font-mono text-base">{c.counts[i][j]}</span>
                    {cells.length ? <CellLinks datasetId={datasetId} cells={cells} /> : null}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </Card>
  );
}

/** How many of a confusion cell's entities are listed before the rest fold away. */
const SHOWN_CELL_LINKS = 5;

/** A confusion cell's entities as links: the first few, the rest folded in a scrolling list (116 inline made the page 4,000 px tall). */
function CellLinks({ datasetId, cells }: { datasetId: number; cells: EntityRef[] }) {
  const labelOf = useConversationLabels(datasetId, cells.map((e) => e.conversation_id));
  const link = (e: EntityRef) => (
    <li key={`${e.entity_type}:${e.entity_id}`}>
      <Link href={cellHref(datasetId, e)} className="text-brand-700 hover:underline">
        {entityWords(e, labelOf)}
      </Link>
    </li>
  );
  const rest = cells.slice(SHOWN_CELL_LINKS);
  return (
    <div className="mt-1 text-xs" data-testid="confusion-links">
      <ul className="space-y-0.5">{cells.slice(0, SHOWN_CELL_LINKS).map(link)}</ul>
      {rest.length ? (
        <details className="mt-1">
          <summary className="cursor-pointer text-slate-600 hover:text-slate-900">{rest.length} more</summary>
          <ul className="mt-1 max-h-48 space-y-0.5 overflow-y-auto pr-2">{rest.map(link)}</ul>
        </details>
      ) : null}
    </div>
  );
}
