"use client";

import { useState, type FormEvent } from "react";
import { formatUsd } from "@/components/grid/run-estimate";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { ApiError, apiFetch } from "@/lib/client/api";
import type { OnlineRule } from "@/lib/schemas/online";

export type LiveMetric = { id: number; name: string; evaluation_level: string };

type Draft = { id: number | null; metrics: number[]; samplePercent: string; idleSeconds: string; cap: string; filter: string; enabled: boolean };

const emptyDraft = (metrics: LiveMetric[]): Draft => ({
  id: null,
  metrics: metrics.map((m) => m.id),
  samplePercent: "100",
  idleSeconds: "60",
  cap: "",
  filter: "",
  enabled: true,
});

const fromRule = (r: OnlineRule): Draft => ({
  id: r.id,
  metrics: r.pipeline_node_ids,
  samplePercent: String(Math.round(r.sample_rate * 1000) / 10),
  idleSeconds: String(r.idle_seconds),
  cap: r.max_cost_usd_per_day === null ? "" : String(r.max_cost_usd_per_day),
  filter: r.filter ?? "",
  enabled: r.enabled,
});

const input = "h-9 rounded-md border border-slate-300 bg-white px-2.5 text-sm shadow-sm focus:border-brand-500 focus:outline-none focus:ring-2 focus:ring-brand-100";

/** The dataset's online rules with their sampling and spend, and a form that creates or edits one. */
export function RulesPanel({ datasetId, metrics, rules, onChanged }: { datasetId: number; metrics: LiveMetric[]; rules: OnlineRule[]; onChanged: () => void }) {
  const [draft, setDraft] = useState<Draft | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const names = new Map(metrics.map((m) => [m.id, m.name]));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!draft) return;
    setBusy(true);
    setError(null);
    const body = {
      pipeline_node_ids: draft.metrics,
      sample_rate: Number(draft.samplePercent) / 100,
      idle_seconds: Number(draft.idleSeconds),
      max_cost_usd_per_day: draft.cap.trim() === "" ? null : Number(draft.cap),
      filter: draft.filter.trim() === "" ? null : draft.filter.trim(),
      enabled: draft.enabled,
    };
    try {
      if (draft.id === null) await apiFetch<OnlineRule>("/online-rules", { method: "POST", json: { dataset_id: datasetId, ...body } });
      else await apiFetch<OnlineRule>(`/online-rules/${draft.id}`, { method: "PATCH", json: body });
      setDraft(null);
      onChanged();
    } catch (err) {
      setError(err instanceof Error ? err : new Error(String(err)));
    } finally {
      setBusy(false);
    }
  };

  const act = async (path: string, init: RequestInit & { json?: unknown }) => {
    setError(null);
    try {
      await apiFetch(path, init);
      onChanged();
    } catch (err) {
      setError(err instanceof Error ? err : new Error(String(err)));
    }
  };

  return (
    <Card>
      <CardHeader
        title="Online rules"
        description="Each finished conversation is evaluated once per rule, and again when it grows"
        actions={
          draft ? null : (
            <Button needs="annotator" size="sm" onClick={() => setDraft(emptyDraft(metrics))} disabled={metrics.length === 0} title={metrics.length ? undefined : "Add a metric first"}>
              New rule
            </Button>
          )
        }
      />
      {rules.length === 0 && !draft ? <p className="px-5 py-6 text-center text-sm text-slate-500">No rules: conversations arrive but nothing judges them.</p> : null}
      {rules.length ? (
        <table className="w-full text-sm" aria-label="Online rules">
          <thead className="border-b border-slate-200 text-left text-xs uppercase tracking-wide text-slate-500">
            <tr>
              <th className="px-5 py-2 font-medium">Metrics</th>
              <th className="px-2 py-2 font-medium">Sampling</th>
              <th className="px-2 py-2 font-medium">Quiet for</th>
              <th className="px-2 py-2 font-medium">Spend today</th>
              <th className="px-2 py-2 text-right font-medium">Evaluated</th>
              <th className="px-2 py-2 font-medium">State</th>
              <th className="px-5 py-2" />
            </tr>
          </thead>
          <tbody>
            {rules.map((r) => (
              <tr key={r.id} className="border-b border-slate-100 align-top last:border-0" data-testid="online-rule">
                <td className="px-5 py-2">
                  {r.pipeline_node_ids.map((id) => names.get(id) ?? `metric ${id}`).join(", ")}
                  {r.filter ? <div className="font-mono text-xs text-slate-500">{r.filter}</div> : null}
                </td>
                <td className="px-2 py-2 tabular-nums">{Math.round(r.sample_rate * 1000) / 10}%</td>
                <td className="px-2 py-2 tabular-nums">{r.idle_seconds} s</td>
                <td className="px-2 py-2 tabular-nums">
                  {formatUsd(r.spent_usd_today)}
                  {r.max_cost_usd_per_day !== null ? <span className="text-slate-500"> of {formatUsd(r.max_cost_usd_per_day)}</span> : null}
                </td>
                <td className="px-2 py-2 text-right tabular-nums" data-testid="rule-evaluated">
                  {r.evaluated.toLocaleString()}
                </td>
                <td className="px-2 py-2">
                  {r.enabled ? <span className="text-emerald-700">on</span> : <span className="text-slate-500">paused</span>}
                  {r.max_cost_usd_per_day !== null && r.spent_usd_today >= r.max_cost_usd_per_day ? <div className="text-xs text-amber-700">budget reached today</div> : null}
                  {r.last_error ? (
                    <div className="max-w-64 text-xs text-red-700" title={r.last_error}>
                      {r.last_error}
                    </div>
                  ) : null}
                </td>
                <td className="space-x-1 whitespace-nowrap px-5 py-2 text-right">
                  <Button needs="annotator" size="sm" variant="ghost" onClick={() => setDraft(fromRule(r))}>
                    Edit
                  </Button>
                  <Button needs="annotator" size="sm" variant="ghost" onClick={() => void act(`/online-rules/${r.id}`, { method: "PATCH", json: { enabled: !r.enabled } })}>
                    {r.enabled ? "Pause" : "Resume"}
                  </Button>
                  <Button needs="annotator" size="sm" variant="ghost" onClick={() => void act(`/online-rules/${r.id}`, { method: "DELETE" })}>
                    Delete
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {draft ? (
        <form onSubmit={(e) => void submit(e)} aria-label={draft.id === null ? "New rule" : `Edit rule ${draft.id}`} className="space-y-3 border-t border-slate-200 px-5 py-4">
          <fieldset>
            <legend className="mb-1 text-xs font-medium text-slate-500">Metrics</legend>
            <div className="flex flex-wrap gap-3">
              {metrics.map((m) => (
                <label key={m.id} className="flex items-center gap-1.5 text-sm">
                  <input
                    type="checkbox"
                    checked={draft.metrics.includes(m.id)}
                    onChange={(e) => setDraft({ ...draft, metrics: e.target.checked ? [...draft.metrics, m.id] : draft.metrics.filter((id) => id !== m.id) })}
                  />
                  {m.name} <span className="text-xs text-slate-400">{m.evaluation_level}</span>
                </label>
              ))}
            </div>
          </fieldset>
          <div className="flex flex-wrap items-end gap-4">
            <label className="text-xs font-medium text-slate-500">
              <span className="mb-1 block">Sample (%)</span>
              <input className={`${input} w-24`} type="number" min={0} max={100} step="any" value={draft.samplePercent} onChange={(e) => setDraft({ ...draft, samplePercent: e.target.value })} />
            </label>
            <label className="text-xs font-medium text-slate-500">
              <span className="mb-1 block">Finished after (s without a span)</span>
              <input className={`${input} w-28`} type="number" min={1} value={draft.idleSeconds} onChange={(e) => setDraft({ ...draft, idleSeconds: e.target.value })} />
            </label>
            <label className="text-xs font-medium text-slate-500">
              <span className="mb-1 block">Daily cap (USD, optional)</span>
              <input className={`${input} w-28`} type="number" min={0} step="any" value={draft.cap} onChange={(e) => setDraft({ ...draft, cap: e.target.value })} />
            </label>
            <label className="flex-1 text-xs font-medium text-slate-500">
              <span className="mb-1 block">Filter (grid syntax, optional)</span>
              <input className={`${input} w-full font-mono`} value={draft.filter} placeholder="meta.service.name==support-bot" onChange={(e) => setDraft({ ...draft, filter: e.target.value })} />
            </label>
            <label className="flex items-center gap-1.5 pb-2 text-sm">
              <input type="checkbox" checked={draft.enabled} onChange={(e) => setDraft({ ...draft, enabled: e.target.checked })} />
              Enabled
            </label>
          </div>
          <div className="flex gap-2">
            <Button needs="annotator" type="submit" size="sm" disabled={busy || draft.metrics.length === 0}>
              {draft.id === null ? "Create rule" : "Save rule"}
            </Button>
            <Button size="sm" variant="ghost" onClick={() => setDraft(null)}>
              Cancel
            </Button>
          </div>
        </form>
      ) : null}
      {error ? (
        <div role="alert" className="border-t border-red-200 bg-red-50 px-5 py-2 text-sm text-red-800">
          {error.message}
          {error instanceof ApiError && error.details.length ? (
            <ul className="list-disc pl-5">
              {error.details.map((d, i) => (
                <li key={i}>
                  <span className="font-mono text-xs">{d.path}</span>: {d.message}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </Card>
  );
}
