"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { Input } from "@/components/ui/field";
import { Select } from "@/components/ui/select";
import { ApiError, apiFetch } from "@/lib/client/api";
import type { Alignment, AlignmentStrategy } from "@/lib/schemas/alignments";
import type { Metric } from "@/lib/schemas/metrics";
import { fmt } from "./agreement-format";

type Estimate = { truth_n: number; judge_calls: number; optimizer_calls: number; estimated_cost_usd: number | null; estimated_input_tokens: number };
type Promoted = { version: { version: number }; previous_version: number | null; strategy: AlignmentStrategy };

const strategyNames: Record<AlignmentStrategy, string> = { few_shot: "Few-shot examples", rewrite: "Rewritten rubric", threshold: "Pass threshold" };
const iv = (i: [number, number] | null | undefined) => (i ? `[${fmt(i[0])}, ${fmt(i[1])}]` : "");
const signed = (x: number | null) => (x === null ? "—" : `${x >= 0 ? "+" : ""}${x.toFixed(3)}`);

/**
 * "Align this judge": folds and strategies, live progress, the baseline and each candidate on held-out
 * cells, each candidate's prompt shown in full, and Promote (refused by the server unless the candidate
 * beat the baseline; "Promote anyway" forces it after a confirmation).
 */
export function AlignPanel({ metric }: { metric: Metric }) {
  const score = metric.output_type !== "checkbox" && metric.output_type !== "text";
  const [open, setOpen] = useState(false);
  const [truth, setTruth] = useState<"labels" | "reference">(metric.reference ? "reference" : "labels");
  const [folds, setFolds] = useState("5");
  const [maxExamples, setMaxExamples] = useState("8");
  const [optimizer, setOptimizer] = useState("");
  const [maxCost, setMaxCost] = useState("");
  const [strategies, setStrategies] = useState<AlignmentStrategy[]>(["few_shot"]);
  const [alignmentId, setAlignmentId] = useState<number | null>(null);
  const [estimate, setEstimate] = useState<Estimate | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [promoted, setPromoted] = useState<Promoted | null>(null);

  const body = (dryRun: boolean) => ({
    pipeline_node_id: metric.id,
    truth,
    strategies,
    folds: Number(folds),
    max_examples: Number(maxExamples),
    ...(optimizer.trim() ? { optimizer_model: optimizer.trim() } : {}),
    ...(maxCost.trim() ? { max_cost_usd: Number(maxCost) } : {}),
    dry_run: dryRun,
  });
  const say = (e: unknown) => setError(e instanceof ApiError ? e.message : String(e));
  const price = useMutation({ mutationFn: async () => (await apiFetch<Estimate>("/alignments", { method: "POST", json: body(true) })).data, onSuccess: (e) => (setEstimate(e), setError(null)), onError: say });
  const start = useMutation({
    mutationFn: async () => (await apiFetch<Alignment>("/alignments", { method: "POST", json: body(false) })).data,
    onSuccess: (a) => (setAlignmentId(a.id), setError(null), setPromoted(null)),
    onError: say,
  });
  // The metric's latest alignment is shown on opening, so a reload or another person's alignment is not lost.
  const earlier = useQuery({
    queryKey: ["alignments", metric.id],
    enabled: open && alignmentId === null,
    queryFn: async () => (await apiFetch<Alignment[]>(`/alignments?pipeline_node_id=${metric.id}`)).data,
  });
  const shownId = alignmentId ?? earlier.data?.[0]?.id ?? null;
  const alignment = useQuery({
    queryKey: ["alignment", shownId],
    enabled: shownId !== null,
    queryFn: async () => (await apiFetch<Alignment>(`/alignments/${shownId}`)).data,
    refetchInterval: (q) => (q.state.data && (q.state.data.status === "completed" || q.state.data.status === "failed" || q.state.data.status === "cancelled") ? false : 700),
  });
  const promote = useMutation({
    mutationFn: async (v: { strategy: AlignmentStrategy; force: boolean }) => (await apiFetch<Promoted>(`/alignments/${shownId}/promote`, { method: "POST", json: v })).data,
    onSuccess: (p) => (setPromoted(p), setError(null)),
    onError: say,
  });
  const toggle = (s: AlignmentStrategy) => setStrategies((xs) => (xs.includes(s) ? xs.filter((x) => x !== s) : [...xs, s]));
  const a = alignment.data;

  return (
    <Card data-testid="align-panel">
      <CardHeader
        title="Align this judge"
        description="Candidates of this metric's prompt built from the truth and scored on held-out folds: each cell is judged by a candidate built without its fold."
        actions={
          <Button variant={open ? "secondary" : "primary"} needs="annotator" onClick={() => setOpen(!open)}>
            {open ? "Close" : "Align this judge"}
          </Button>
        }
      />
      {open ? (
        <div className="space-y-4 px-5 py-4">
          <div className="flex flex-wrap items-end gap-4 text-sm">
            <label>
              <span className="mb-1 block font-medium text-slate-700">Truth</span>
              <Select value={truth} onChange={(e) => setTruth(e.target.value as "labels" | "reference")} aria-label="Truth">
                <option value="labels">Human labels</option>
                {metric.reference ? <option value="reference">Reference</option> : null}
              </Select>
            </label>
            <label>
              <span className="mb-1 block font-medium text-slate-700">Folds</span>
              <Input type="number" min={2} max={20} value={folds} onChange={(e) => setFolds(e.target.value)} aria-label="Folds" className="w-20" />
            </label>
            <label>
              <span className="mb-1 block font-medium text-slate-700">Examples at most</span>
              <Input type="number" min={1} max={32} value={maxExamples} onChange={(e) => setMaxExamples(e.target.value)} aria-label="Examples at most" className="w-20" />
            </label>
            <label>
              <span className="mb-1 block font-medium text-slate-700">Optimiser model</span>
              <Input value={optimizer} placeholder="the judge model" onChange={(e) => setOptimizer(e.target.value)} aria-label="Optimiser model" className="w-44" />
            </label>
            <label>
              <span className="mb-1 block font-medium text-slate-700">Max cost (USD)</span>
              <Input value={maxCost} placeholder="no limit" onChange={(e) => setMaxCost(e.target.value)} aria-label="Max cost (USD)" className="w-28" />
            </label>
          </div>
          <fieldset className="flex flex-wrap gap-4 text-sm">
            <legend className="mb-1 font-medium text-slate-700">Strategies</legend>
            {(["few_shot", "rewrite", "threshold"] as const).map((s) => (
              <label key={s} className={`flex items-center gap-2 ${s === "threshold" && !score ? "text-slate-400" : ""}`} title={s === "threshold" && !score ? "for score metrics only" : undefined}>
                <input type="checkbox" checked={strategies.includes(s)} disabled={s === "threshold" && !score} onChange={() => toggle(s)} />
                {strategyNames[s]}
              </label>
            ))}
          </fieldset>
          <div className="flex flex-wrap items-center gap-3">
            <Button variant="secondary" needs="annotator" disabled={price.isPending || strategies.length === 0} onClick={() => price.mutate()}>
              Estimate calls
            </Button>
            <Button needs="annotator" disabled={start.isPending || strategies.length === 0 || (a !== undefined && (a.status === "pending" || a.status === "processing"))} onClick={() => start.mutate()}>
              Start alignment
            </Button>
            {estimate ? (
              <span className="text-sm text-slate-600" data-testid="align-estimate">
                {estimate.truth_n} truth cells · {estimate.judge_calls} judge calls + {estimate.optimizer_calls} optimiser calls · ~{estimate.estimated_input_tokens.toLocaleString()} input tokens
                {estimate.estimated_cost_usd !== null ? ` · ~$${estimate.estimated_cost_usd.toFixed(4)}` : ""}
              </span>
            ) : null}
          </div>
          {error ? (
            <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-700" data-testid="align-error">
              {error}
            </p>
          ) : null}
          {a ? <AlignmentResult alignment={a} promoting={promote.isPending} onPromote={(strategy, force) => promote.mutate({ strategy, force })} /> : null}
          {promoted ? (
            <p className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800" data-testid="align-promoted">
              Saved as version {promoted.version.version} of the metric&apos;s prompt
              {promoted.previous_version !== null ? ` (version ${promoted.previous_version} stays one click away in the metric's agreement history)` : ""}.{" "}
              <Link className="underline" href={`/datasets/${metric.dataset_id}/metrics/${metric.id}`}>
                Open the metric
              </Link>
            </p>
          ) : null}
        </div>
      ) : null}
    </Card>
  );
}

function AlignmentResult({ alignment: a, promoting, onPromote }: { alignment: Alignment; promoting: boolean; onPromote: (s: AlignmentStrategy, force: boolean) => void }) {
  const working = a.status === "pending" || a.status === "processing";
  const share = a.progress.total ? Math.min(1, a.progress.done / a.progress.total) : 0;
  return (
    <div className="space-y-3" data-testid="alignment-result" data-status={a.status}>
      {a.annotator_pairs.length ? (
        <p className="text-sm text-slate-700" data-testid="align-annotators">
          Annotators first: {a.annotator_pairs[0].a} · {a.annotator_pairs[0].b} agree at κ <span className="font-mono">{fmt(a.annotator_kappa)}</span> on {a.annotator_pairs[0].n} cells.
        </p>
      ) : null}
      {a.warnings.map((w) => (
        <p key={w} className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900" data-testid="align-warning">
          {w}
        </p>
      ))}
      <div className="text-sm text-slate-600">
        <span data-testid="align-status">
          {working ? "Judging…" : a.status === "completed" ? "Completed" : a.status === "cancelled" ? "Cancelled" : "Failed"} · {a.progress.done} of {a.progress.total} calls
        </span>{" "}
        · {a.truth_n} truth cells ({Object.entries(a.truth_classes).map(([k, v]) => `${v} ${k}`).join(", ")}) {a.pass_threshold !== null ? ` · a score ≥ ${a.pass_threshold} passes` : ""} · {a.folds} folds · {a.usage.judge_calls} judge calls, {a.usage.optimizer_calls} optimiser calls, {a.usage.cached} from cache
        {a.usage.cost_usd ? ` · $${a.usage.cost_usd.toFixed(4)}` : ""}
        <div className="mt-1 h-2 w-full max-w-md overflow-hidden rounded bg-slate-100" role="progressbar" aria-valuenow={Math.round(share * 100)} aria-label="Alignment progress">
          <div className="h-full bg-brand-600 transition-all" style={{ width: `${share * 100}%` }} />
        </div>
      </div>
      {a.error ? <p className="text-sm text-red-700">{a.error}</p> : null}
      {a.baseline ? (
        <table className="w-full text-sm" data-testid="align-table">
          <thead>
            <tr className="border-b border-slate-200 text-left text-xs text-slate-500">
              <th className="py-2 pr-4 font-medium">Held-out cells</th>
              <th className="py-2 pr-4 font-medium">Cohen&apos;s κ</th>
              <th className="py-2 pr-4 font-medium">Accuracy</th>
              <th className="py-2 pr-4 font-medium">TPR</th>
              <th className="py-2 pr-4 font-medium">TNR</th>
              <th className="py-2 pr-4 font-medium">Δκ vs baseline</th>
              <th className="py-2 font-medium" />
            </tr>
          </thead>
          <tbody>
            <tr className="border-b border-slate-100" data-testid="align-row-baseline">
              <td className="py-2 pr-4">Baseline (current prompt{a.baseline_version ? `, version ${a.baseline_version}` : ""})</td>
              <Fig v={a.baseline.kappa} i={a.baseline.intervals.kappa} testId="kappa" />
              <Fig v={a.baseline.accuracy} i={a.baseline.intervals.accuracy} />
              <Fig v={a.baseline.tpr} i={a.baseline.intervals.tpr} />
              <Fig v={a.baseline.tnr} i={a.baseline.intervals.tnr} />
              <td className="py-2 pr-4 text-slate-400">—</td>
              <td />
            </tr>
            {a.candidates.map((c) => (
              <tr key={c.strategy} className="border-b border-slate-100" data-testid={`align-row-${c.strategy}`}>
                <td className="py-2 pr-4">
                  {strategyNames[c.strategy]} {a.recommended === c.strategy ? <Badge tone="success">recommended</Badge> : null}
                </td>
                <Fig v={c.held_out.kappa} i={c.held_out.intervals.kappa} testId="kappa" />
                <Fig v={c.held_out.accuracy} i={c.held_out.intervals.accuracy} />
                <Fig v={c.held_out.tpr} i={c.held_out.intervals.tpr} />
                <Fig v={c.held_out.tnr} i={c.held_out.intervals.tnr} />
                <td className="py-2 pr-4 font-mono" data-testid="delta">
                  {signed(c.delta_kappa.estimate)} <span className="text-xs text-slate-500">{iv(c.delta_kappa.interval)}</span>
                  <div className="text-xs">
                    {c.beats_baseline ? (
                      <span className="text-emerald-700">interval above zero</span>
                    ) : !c.prompt && c.strategy !== "threshold" ? (
                      // A rewrite that lost the prompt's variables (or failed): nothing was judged, nothing to prove.
                      <span className="text-red-700">no candidate: see why below</span>
                    ) : (
                      <span className="text-slate-500">not proven: the interval reaches zero</span>
                    )}
                  </div>
                </td>
                <td className="py-2 text-right">
                  {c.prompt && c.strategy !== "threshold" ? (
                    c.beats_baseline ? (
                      <Button size="sm" needs="annotator" disabled={promoting} onClick={() => onPromote(c.strategy, false)}>
                        Promote
                      </Button>
                    ) : (
                      <Button
                        size="sm"
                        variant="secondary"
                        needs="annotator"
                        disabled={promoting}
                        onClick={() => window.confirm(`${strategyNames[c.strategy]} did not beat the baseline on held-out cells. Promote it anyway?`) && onPromote(c.strategy, true)}
                      >
                        Promote anyway…
                      </Button>
                    )
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {a.candidates.map((c) =>
        c.prompt || c.threshold !== undefined || c.error ? (
          <details key={c.strategy} open className="rounded-md border border-slate-200" data-testid={`align-candidate-${c.strategy}`}>
            <summary className="cursor-pointer px-3 py-2 text-sm font-medium text-slate-800">
              {strategyNames[c.strategy]}: {c.strategy === "threshold" ? "the threshold chosen" : c.prompt ? "the prompt promote would save, in full" : "no candidate"}
            </summary>
            {c.error ? <p className="px-3 pb-2 text-sm text-red-700">{c.error}</p> : null}
            {c.strategy === "threshold" ? (
              <p className="px-3 pb-3 text-sm">
                Pass at score ≥ <span className="font-mono">{c.threshold ?? "—"}</span> (per fold, chosen on the other folds: {(c.fold_thresholds ?? []).map((t) => t ?? "—").join(", ")}). A threshold is not part of the prompt: use it where the score is read.
              </p>
            ) : (
              <pre className="max-h-96 overflow-auto whitespace-pre-wrap border-t border-slate-100 bg-slate-50 px-3 py-2 font-mono text-xs text-slate-800">{c.prompt}</pre>
            )}
          </details>
        ) : null,
      )}
    </div>
  );
}

function Fig({ v, i, testId }: { v: number | null; i: [number, number] | null; testId?: string }) {
  return (
    <td className="py-2 pr-4 font-mono" data-testid={testId}>
      {fmt(v)} <span className="text-xs text-slate-500">{iv(i)}</span>
    </td>
  );
}
