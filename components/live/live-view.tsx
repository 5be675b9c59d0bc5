"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { Card, CardHeader } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { apiFetch } from "@/lib/client/api";
import type { LiveDataset } from "@/lib/schemas/online";
import { RulesPanel, type LiveMetric } from "./rules-panel";

const POLL_MS = 2000;
const colours = ["#4f6ef7", "#10b981", "#f59e0b", "#ef4444", "#8b5cf6", "#06b6d4", "#ec4899", "#84cc16"];

function ago(iso: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

/** A dataset's Live page: rules, conversations arriving, scores over time and the last failures, polled every 2 s. */
export function LiveView({ datasetId, metrics }: { datasetId: number; metrics: LiveMetric[] }) {
  const [bucket, setBucket] = useState<"hour" | "day">("hour");
  const query = useQuery({
    queryKey: ["live", datasetId, bucket],
    queryFn: async () => (await apiFetch<LiveDataset>(`/datasets/${datasetId}/live?bucket=${bucket}&days=${bucket === "hour" ? 2 : 30}`)).data,
    refetchInterval: POLL_MS,
  });
  const data = query.data;
  const names = new Map(metrics.map((m) => [m.id, m.name]));
  // The idle period of the quickest enabled rule: what "finished" means on this page.
  const idle = Math.min(60, ...(data?.rules.filter((r) => r.enabled).map((r) => r.idle_seconds) ?? []));
  const now = query.dataUpdatedAt || 0;

  return (
    <div className="space-y-6">
      <RulesPanel datasetId={datasetId} metrics={metrics} rules={data?.rules ?? []} onChanged={() => void query.refetch()} />

      <div className="grid gap-6 lg:grid-cols-2">
        <Card>
          <CardHeader title="Conversations arriving" description={`The 50 most recently active; finished after ${idle} s without a new span`} />
          {!data || data.conversations.length === 0 ? (
            <p className="px-5 py-8 text-center text-sm text-slate-500">
              No live conversations yet. Point an OpenTelemetry exporter at <code className="font-mono">/api/otel</code>.
            </p>
          ) : (
            <table className="w-full text-sm" aria-label="Live conversations">
              <thead className="border-b border-slate-200 text-left text-xs uppercase tracking-wide text-slate-500">
                <tr>
                  <th className="px-5 py-2 font-medium">Conversation</th>
                  <th className="px-2 py-2 text-right font-medium">Messages</th>
                  <th className="px-2 py-2 text-right font-medium">Spans</th>
                  <th className="px-2 py-2 font-medium">Last span</th>
                  <th className="px-5 py-2 font-medium">State</th>
                </tr>
              </thead>
              <tbody>
                {data.conversations.map((c) => {
                  const state =
                    c.evaluated_revision === c.revision ? "evaluated" : now - Date.parse(c.last_span_at) < idle * 1000 ? "receiving" : "finished";
                  return (
                    <tr key={c.id} className="border-b border-slate-100 last:border-0" data-testid="live-conversation">
                      <td className="max-w-56 truncate px-5 py-2">
                        {c.conversation_id ? (
                          <a className="text-brand-700 hover:underline" href={`/datasets/${datasetId}?open=conversation:${c.conversation_id}&conversation=${c.conversation_id}`}>
                            {c.name ?? c.key}
                          </a>
                        ) : (
                          (c.name ?? c.key)
                        )}
                      </td>
                      <td className="px-2 py-2 text-right tabular-nums">{c.messages}</td>
                      <td className="px-2 py-2 text-right tabular-nums">{c.span_count}</td>
                      <td className="px-2 py-2 text-slate-500">{ago(c.last_span_at, now)}</td>
                      <td className="px-5 py-2">
                        <span
                          className={cn(
                            "rounded px-1.5 py-0.5 text-xs font-medium",
                            state === "evaluated" ? "bg-emerald-50 text-emerald-700" : state === "receiving" ? "bg-sky-50 text-sky-700" : "bg-slate-100 text-slate-600",
                          )}
                        >
                          {state}
                        </span>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
        </Card>

        <Card>
          <CardHeader
            title="Scores over time"
            description="Mean score per metric"
            actions={
              <div role="radiogroup" aria-label="Bucket" className="inline-flex rounded-md border border-slate-300 bg-slate-50 p-0.5 text-xs">
                {(["hour", "day"] as const).map((b) => (
                  <button
                    key={b}
                    type="button"
                    role="radio"
                    aria-checked={bucket === b}
                    onClick={() => setBucket(b)}
                    className={cn("rounded px-2 py-1 font-medium", bucket === b ? "bg-white text-slate-900 shadow-sm" : "text-slate-500")}
                  >
                    {b === "hour" ? "Hourly" : "Daily"}
                  </button>
                ))}
              </div>
            }
          />
          <ScoreChart scores={data?.scores ?? []} names={names} bucket={bucket} />
        </Card>
      </div>

      <Card>
        <CardHeader title="Last failures" description="Cells of the rules' runs that failed, newest first" />
        {!data || data.failures.length === 0 ? (
          <p className="px-5 py-6 text-center text-sm text-slate-500">No failures.</p>
        ) : (
          <ul className="divide-y divide-slate-100 text-sm" aria-label="Last failures">
            {data.failures.map((f) => (
              <li key={f.result_id} className="flex gap-4 px-5 py-2">
                <span className="w-36 shrink-0 text-slate-500">{new Date(f.created_at).toLocaleString()}</span>
                <span className="w-40 shrink-0 truncate font-medium">{names.get(f.pipeline_node_id) ?? `metric ${f.pipeline_node_id}`}</span>
                <a className="shrink-0 text-brand-700 hover:underline" href={`/datasets/${datasetId}/executions/${f.execution_id}`}>
                  run {f.execution_id}
                </a>
                <span className="truncate text-red-700">{f.error}</span>
              </li>
            ))}
          </ul>
        )}
      </Card>
    </div>
  );
}

function ScoreChart({ scores, names, bucket }: { scores: LiveDataset["scores"]; names: Map<number, string>; bucket: "hour" | "day" }) {
  const nodeIds = [...new Set(scores.map((s) => s.pipeline_node_id))];
  const byBucket = new Map<string, Record<string, number | string>>();
  for (const s of scores) {
    const row = byBucket.get(s.bucket) ?? { bucket: s.bucket };
    row[`m${s.pipeline_node_id}`] = Math.round(s.mean * 1000) / 1000;
    byBucket.set(s.bucket, row);
  }
  const data = [...byBucket.values()].sort((a, b) => String(a.bucket).localeCompare(String(b.bucket)));
  const label = (iso: unknown) => {
    const d = new Date(String(iso));
    return bucket === "hour" ? d.toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit" }) : d.toLocaleDateString(undefined, { month: "short", day: "numeric" });
  };
  if (data.length === 0) return <p className="px-5 py-8 text-center text-sm text-slate-500">No scores yet.</p>;
  return (
    <figure aria-label="Scores over time" data-testid="score-chart" className="h-64 w-full px-2 py-3">
      <ResponsiveContainer width="100%" height="100%">
        <LineChart data={data} margin={{ top: 8, right: 16, bottom: 0, left: -16 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" />
          <XAxis dataKey="bucket" tickFormatter={label} tick={{ fontSize: 11, fill: "#64748b" }} />
          <YAxis tick={{ fontSize: 11, fill: "#64748b" }} />
          <Tooltip labelFormatter={label} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          {nodeIds.map((id, i) => (
            <Line key={id} type="monotone" dataKey={`m${id}`} name={names.get(id) ?? `metric ${id}`} stroke={colours[i % colours.length]} dot isAnimationActive={false} connectNulls />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </figure>
  );
}
