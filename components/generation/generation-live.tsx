"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { ApiError, apiFetch } from "@/lib/client/api";
import type { Generation } from "@/lib/schemas/generations";
import type { Metric } from "@/lib/schemas/metrics";

type Written = { conversation_id: number; source_conversation_id: number | null; repeat: number | null; stop_reason: string | null; error: string | null };
const active = (s: Generation["status"]) => s === "pending" || s === "processing";
const failedReason = (r: string | null) => r === "target_error" || r === "simulator_error";

/** A generation followed live (SSE): conversations as they are written, counts and stop reasons, cancel; once ended, evaluate both datasets and compare. */
/** The written conversations in source order, each source's repeats in turn (not in the order they finished). */
function inSourceOrder(written: Written[], sourceNames: Record<number, string>): Written[] {
  const order = new Map(Object.keys(sourceNames).map((id, i) => [Number(id), i]));
  const at = (c: Written) => order.get(c.source_conversation_id ?? -1) ?? Number.MAX_SAFE_INTEGER;
  return [...written].sort((x, y) => at(x) - at(y) || (x.source_conversation_id ?? 0) - (y.source_conversation_id ?? 0) || (x.repeat ?? 0) - (y.repeat ?? 0));
}

export function GenerationLive({ initial, sourceMetrics, sourceNames }: { initial: Generation; sourceMetrics: Metric[]; sourceNames: Record<number, string> }) {
  const router = useRouter();
  const [g, setG] = useState(initial);
  const [written, setWritten] = useState<Written[]>([]);
  const [chosen, setChosen] = useState<number[]>(sourceMetrics.filter((m) => m.evaluation_level === "conversation").map((m) => m.id));
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const es = new EventSource(`/api/generations/${initial.id}/events`);
    es.addEventListener("conversation", (e) => {
      const c = JSON.parse((e as MessageEvent<string>).data) as Written;
      setWritten((list) => (list.some((x) => x.conversation_id === c.conversation_id) ? list : [...list, c]));
    });
    es.addEventListener("processing", (e) => {
      const p = JSON.parse((e as MessageEvent<string>).data) as Pick<Generation, "status" | "completed" | "failed" | "total" | "stop_reasons">;
      setG((now) => ({ ...now, ...p }));
    });
    es.addEventListener("done", (e) => {
      setG(JSON.parse((e as MessageEvent<string>).data) as Generation);
      es.close();
    });
    return () => es.close();
  }, [initial.id]);

  async function cancel() {
    setBusy("cancel");
    try {
      setG((await apiFetch<Generation>(`/generations/${g.id}/cancel`, { method: "POST" })).data);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(null);
    }
  }

  async function evaluate() {
    setBusy("evaluate");
    setError(null);
    try {
      const { data } = await apiFetch<{ compare_url: string; source_execution: { id: number }; generated_execution: { id: number } }>(`/generations/${g.id}/evaluate`, { method: "POST", json: { pipeline_node_ids: chosen } });
      // The comparison reads both runs once they have ended.
      for (;;) {
        const runs = await Promise.all([data.source_execution.id, data.generated_execution.id].map((id) => apiFetch<{ status: string }>(`/evaluation-pipeline-executions/${id}`)));
        if (runs.every((r) => !["pending", "processing"].includes(r.data.status))) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      router.push(data.compare_url);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
      setBusy(null);
    }
  }

  const done = g.completed + g.failed;
  const percent = g.total ? Math.round((100 * done) / g.total) : 0;
  const reasons = Object.entries(g.stop_reasons ?? {}).filter(([, n]) => n > 0);
  return (
    <div className="space-y-5">
      <Card>
        <CardHeader
          title={`Generation ${g.id} · ${g.mode}`}
          description={`Target ${String((g.params.target as { name?: string } | undefined)?.name ?? g.target_id)} · ${g.total} conversations to generate`}
          actions={
            active(g.status) ? (
              <Button variant="danger" size="sm" onClick={() => void cancel()} disabled={busy !== null} needs="annotator">
                Cancel
              </Button>
            ) : (
              <Link href={`/datasets/${g.dataset_id}`} className="text-sm font-medium text-brand-700 hover:underline">
                Open the generated dataset
              </Link>
            )
          }
        />
        <div className="space-y-3 p-5">
          <div className="flex flex-wrap items-center gap-2 text-sm" data-testid="generation-counts">
            <Badge tone={g.status === "completed" ? "success" : g.status === "failed" ? "danger" : g.status === "cancelled" ? "warning" : "brand"}>{g.status}</Badge>
            <span>
              {done} of {g.total} · {g.completed} completed · {g.failed} failed
            </span>
            {/* Counts of conversations by how they ended ("max turns: 6" read as the setting without it). */}
            {reasons.length ? <span className="text-xs text-slate-500">conversations ended by</span> : null}
            {reasons.map(([r, n]) => (
              <Badge key={r} tone={failedReason(r) ? "danger" : "neutral"}>
                {r.replaceAll("_", " ")}: {n}
              </Badge>
            ))}
          </div>
          <div className="h-2 w-full overflow-hidden rounded bg-slate-100" role="progressbar" aria-valuenow={percent} aria-valuemin={0} aria-valuemax={100}>
            <div className="h-full bg-brand-600 transition-all" style={{ width: `${percent}%` }} />
          </div>
          {g.error && g.error !== g.status ? <p className="text-sm text-slate-600">{g.error}</p> : null}
          <ul className="max-h-80 divide-y divide-slate-100 overflow-auto rounded border border-slate-200 text-sm" aria-label="Generated conversations">
            {written.length === 0 ? <li className="px-3 py-2 text-slate-500">No conversation written yet.</li> : null}
            {inSourceOrder(written, sourceNames).map((c) => (
              <li key={c.conversation_id} className="flex items-center justify-between gap-3 px-3 py-1.5">
                <Link href={`/datasets/${g.dataset_id}?open=conversation:${c.conversation_id}&conversation=${c.conversation_id}`} className="truncate text-brand-700 hover:underline">
                  {sourceNames[c.source_conversation_id ?? -1] ?? `source ${c.source_conversation_id}`}
                  {c.repeat !== null ? ` · repeat ${c.repeat + 1}` : ""}
                </Link>
                <Badge tone={failedReason(c.stop_reason) ? "danger" : "neutral"}>{(c.stop_reason ?? "").replaceAll("_", " ")}</Badge>
              </li>
            ))}
          </ul>
        </div>
      </Card>
      {!active(g.status) && done > 0 ? (
        <Card>
          <CardHeader title="Evaluate and compare with the source" description="Runs the chosen metrics (and those they depend on) on the source and on the generated conversations, then opens the comparison paired by source conversation." />
          <div className="space-y-3 p-5">
            {sourceMetrics.length === 0 ? <p className="text-sm text-slate-500">The source dataset has no metrics yet: add one on its page first.</p> : null}
            <div className="flex flex-wrap gap-x-5 gap-y-2">
              {sourceMetrics.map((m) => (
                <label key={m.id} className="flex items-center gap-2 text-sm">
                  <input type="checkbox" checked={chosen.includes(m.id)} onChange={(e) => setChosen((c) => (e.target.checked ? [...c, m.id] : c.filter((x) => x !== m.id)))} />
                  {m.name} <span className="text-xs text-slate-400">{m.evaluation_level}</span>
                </label>
              ))}
            </div>
            <Button onClick={() => void evaluate()} disabled={busy !== null || chosen.length === 0} needs="annotator">
              {busy === "evaluate" ? "Evaluating both datasets…" : "Evaluate and compare with the source"}
            </Button>
          </div>
        </Card>
      ) : null}
      {error ? (
        <p role="alert" className="text-sm text-red-600">
          {error}
        </p>
      ) : null}
    </div>
  );
}
