import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader } from "@/components/ui/card";
import type { SourceComparison } from "@/lib/schemas/compare";

const pct = (x: number | null) => (x === null ? "—" : `${Math.round(x * 100)}%`);
const signed = (x: number | null) => (x === null ? "—" : `${x > 0 ? "+" : ""}${x.toFixed(2)}`);
type Cell = SourceComparison["cells"][number];

/** A generation's run against its source's run, paired by source conversation: per metric, then the conversations that got worse. */
export function SourceComparisonView({ data, sourceDatasetId, generatedDatasetId, names }: { data: SourceComparison; sourceDatasetId: number; generatedDatasetId: number; names: Record<number, string> }) {
  const open = (datasetId: number, id: number) => `/datasets/${datasetId}?open=conversation:${id}&conversation=${id}`;
  const worse = data.cells.filter((c) => c.flip && c.a?.pass === true);
  const better = data.cells.filter((c) => c.flip && c.a?.pass === false);
  const row = (c: Cell) => (
    <tr key={`${c.metric}:${c.source_conversation_id}`} className="border-t border-slate-100">
      <td className="px-3 py-2">{c.metric}</td>
      <td className="px-3 py-2">
        <Link href={open(sourceDatasetId, c.source_conversation_id)} className="text-brand-700 hover:underline">
          {names[c.source_conversation_id] ?? `conversation ${c.source_conversation_id}`}
        </Link>
      </td>
      <td className="px-3 py-2">{c.a?.pass === null || c.a === null ? "—" : c.a.pass ? "pass" : "fail"}</td>
      <td className="space-x-2 px-3 py-2">
        {c.b.map((b) => (
          <Link key={b.conversation_id} href={open(generatedDatasetId, b.conversation_id)} className="text-brand-700 hover:underline">
            {b.pass === null ? "—" : b.pass ? "pass" : "fail"}
            {c.b.length > 1 ? ` (repeat ${b.repeat + 1})` : ""}
            {b.stop_reason === "target_error" || b.stop_reason === "simulator_error" ? ` · ${b.stop_reason.replace("_", " ")}` : ""}
          </Link>
        ))}
      </td>
      <td className="px-3 py-2 tabular-nums">{signed(c.delta)}</td>
    </tr>
  );
  const table = (cells: Cell[], empty: string, label: string) => (
    <table className="w-full text-left text-sm" aria-label={label}>
      <thead className="text-xs uppercase text-slate-500">
        <tr>
          <th className="px-3 py-2">Metric</th>
          <th className="px-3 py-2">Source conversation</th>
          <th className="px-3 py-2">Source</th>
          <th className="px-3 py-2">Generated (open)</th>
          <th className="px-3 py-2">Δ score</th>
        </tr>
      </thead>
      <tbody>
        {cells.length ? cells.map(row) : (
          <tr>
            <td colSpan={5} className="px-3 py-3 text-slate-500">
              {empty}
            </td>
          </tr>
        )}
      </tbody>
    </table>
  );
  return (
    <div className="space-y-5">
      <Card>
        <CardHeader
          title="By metric"
          description={`Source run ${data.a.id} against generated run ${data.b.id}. pass^k: every repeat passes; pass@k: some repeat passes. A repeat the target cut short never passes; a simulator's error is left out.`}
        />
        <div className="overflow-x-auto">
          <table className="w-full text-left text-sm" aria-label="Metrics compared">
            <thead className="text-xs uppercase text-slate-500">
              <tr>
                {["Metric", "Pairs", "Repeats", "Source pass", "Generated pass", "Got worse", "Got better", "Mean Δ", "pass^k", "pass@k", "Target errors", "Simulator errors"].map((h) => (
                  <th key={h} className="px-3 py-2">
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {data.metrics.map((m) => (
                <tr key={m.name} className="border-t border-slate-100 tabular-nums">
                  <td className="px-3 py-2 font-medium">{m.name}</td>
                  <td className="px-3 py-2">{m.pairs}</td>
                  <td className="px-3 py-2">{m.repeats}</td>
                  <td className="px-3 py-2">{pct(m.a_pass_rate)}</td>
                  <td className="px-3 py-2">{pct(m.b_pass_rate)}</td>
                  <td className="px-3 py-2">{m.worse ? <Badge tone="danger">{m.worse}</Badge> : 0}</td>
                  <td className="px-3 py-2">{m.better ? <Badge tone="success">{m.better}</Badge> : 0}</td>
                  <td className="px-3 py-2">{signed(m.mean_delta)}</td>
                  <td className="px-3 py-2">{pct(m.pass_hat_k)}</td>
                  <td className="px-3 py-2">{pct(m.pass_at_k)}</td>
                  <td className="px-3 py-2">{m.target_errors}</td>
                  <td className="px-3 py-2">{m.simulator_errors}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Card>
      <Card>
        <CardHeader title={`Got worse (${worse.length})`} description="Passed in the source, failed when generated: open either side." />
        <div className="overflow-x-auto">{table(worse, "No conversation got worse.", "Got worse")}</div>
      </Card>
      <Card>
        <CardHeader title={`Got better (${better.length})`} />
        <div className="overflow-x-auto">{table(better, "No conversation got better.", "Got better")}</div>
      </Card>
    </div>
  );
}
