import Link from "next/link";
import type { ReactNode } from "react";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader } from "@/components/ui/card";
import { Table, Td, Th } from "@/components/ui/table";
import type { Comparison } from "@/lib/schemas/comparisons";
import { RefreshWhileRunning } from "./refresh-while-running";

type Side = { id: number; name: string };
type Props = { comparison: Comparison; metricName: string; metricDatasetId: number; a: Side; b: Side | null; labels: Record<number, string>; shown: number };

const pct = (x: number | null | undefined) => (x === null || x === undefined ? "—" : `${(100 * x).toFixed(0)}%`);
const interval = (i: [number, number] | null) => (i ? `95% CI ${pct(i[0])}–${pct(i[1])}` : "no pairs yet");

function Figure({ label, value, hint, testId }: { label: string; value: ReactNode; hint: ReactNode; testId: string }) {
  return (
    <div className="rounded-md border border-slate-200 px-4 py-3" data-testid={testId}>
      <div className="text-xs font-semibold uppercase tracking-wide text-slate-500">{label}</div>
      <div className="mt-1 text-2xl font-semibold text-slate-900">{value}</div>
      <div className="mt-0.5 text-xs text-slate-500">{hint}</div>
    </div>
  );
}

/** The share bar of a's wins, ties and b's wins. */
function Split({ c }: { c: Comparison }) {
  if (c.pairs === 0) return null;
  const w = (n: number) => `${(100 * n) / c.pairs}%`;
  return (
    <div className="flex h-3 w-full overflow-hidden rounded-full bg-slate-100" aria-hidden>
      <div className="bg-emerald-500" style={{ width: w(c.wins_a) }} />
      <div className="bg-slate-300" style={{ width: w(c.ties) }} />
      <div className="bg-sky-500" style={{ width: w(c.wins_b) }} />
    </div>
  );
}

/** A verdict as who won: "a wins", not a bare "a" under a header that names an order (issue 51). */
const verdictText = (v: "A" | "B" | "tie" | null, first: string, second: string) => (v === null ? "—" : v === "tie" ? "tie" : `${v === "A" ? first : second} wins`);

const outcomeBadge = (o: Comparison["results"][number]["outcome"], error: string | null) =>
  o === "a" ? <Badge tone="success">a wins</Badge> : o === "b" ? <Badge tone="brand">b wins</Badge> : o === "tie" ? <Badge>tie</Badge> : error ? <Badge tone="danger">failed</Badge> : <Badge tone="warning">waiting</Badge>;

/** A pairwise comparison: win/tie/loss with its interval, consistency, position bias, and every pair with both verdicts. */
export function ComparisonView({ comparison: c, metricName, metricDatasetId, a, b, labels, shown }: Props) {
  const running = c.status === "pending" || c.status === "processing";
  const bSide = b ?? a;
  const sideName = (s: Side, raw: string) => `${s.name} (${raw})`;
  const conv = (side: Side, ref: { conversation_id: number; message_id: number | null }) => (
    <Link className="text-brand-700 hover:underline" href={`/datasets/${side.id}?open=conversation:${ref.conversation_id}&conversation=${ref.conversation_id}`}>
      {labels[ref.conversation_id] ?? `conversation ${ref.conversation_id}`}
      {ref.message_id !== null ? ` · message ${ref.message_id}` : ""}
    </Link>
  );
  return (
    <div className="space-y-5">
      <div>
        {/* Back to where comparisons start and are listed: side a's Compare replies page (issue 51: no way back). */}
        <Link
          href={`/datasets/${a.id}/pairwise${metricDatasetId === a.id ? `?metric=${c.pipeline_node_id}` : ""}`}
          className="text-sm text-slate-500 hover:text-slate-800"
          data-testid="comparison-back"
        >
          ← {a.name} · Compare replies
        </Link>
        <h1 className="mt-1 text-xl font-semibold text-slate-900">Comparison #{c.id}</h1>
        <p className="mt-1 text-sm text-slate-600">
          <span className="font-medium">{metricName}</span> · {c.pair_by === "siblings" ? "sibling replies within " : "by source conversation: "}
          <span data-testid="side-a">a = {sideName(a, c.a)}</span>
          {b ? (
            <>
              {" "}
              against <span data-testid="side-b">b = {sideName(b, c.b ?? "")}</span>
            </>
          ) : null}{" "}
          · <Badge tone={c.status === "completed" ? "success" : c.status === "failed" ? "danger" : running ? "brand" : "warning"}>{c.status}</Badge>
        </p>
        {c.error ? <p className="mt-1 text-sm text-red-700">{c.error}</p> : null}
        {running ? <RefreshWhileRunning /> : null}
      </div>

      <Card>
        <CardHeader title="Who wins" description={`${c.pairs} of ${c.total} pairs judged in both orders${c.failed ? `, ${c.failed} failed` : ""}. A reply wins only when the judge picks it in both orders; a verdict that flips with the order is a tie.`} />
        <div className="space-y-4 px-5 py-4">
          <div className="grid gap-3 sm:grid-cols-3">
            <Figure testId="wins-a" label="side a wins" value={c.wins_a} hint={`of ${c.pairs} pairs`} />
            <Figure testId="ties" label="ties" value={c.ties} hint="judge said tie, or flipped with the order" />
            <Figure testId="wins-b" label="side b wins" value={c.wins_b} hint={`of ${c.pairs} pairs`} />
          </div>
          <Split c={c} />
          <div className="grid gap-3 sm:grid-cols-3">
            <Figure testId="win-rate" label="side a's win rate" value={pct(c.win_rate_a.estimate)} hint={`ties count half · ${interval(c.win_rate_a.interval)}`} />
            <Figure testId="consistency" label="consistency" value={pct(c.consistency)} hint="pairs whose two verdicts name the same reply" />
            <Figure
              testId="position-bias"
              label="first position wins"
              value={pct(c.first_position_rate)}
              hint={c.first_position_rate === null ? "no verdict picked a reply" : c.first_position_rate >= 0.75 ? "position bias: the judge favours the reply shown first" : c.first_position_rate <= 0.25 ? "position bias: the judge favours the reply shown second" : "50% is no position bias"}
            />
          </div>
          <p className="text-xs text-slate-500">
            {c.judge_calls.toLocaleString("en")} judge calls · {(c.usage.input_tokens + c.usage.output_tokens).toLocaleString("en")} tokens{c.usage.cost_usd ? ` · $${c.usage.cost_usd.toFixed(4)}` : ""}
          </p>
        </div>
      </Card>

      <Card>
        <CardHeader title="Pairs" description={`Both verdicts of each pair: first with a shown as A, then with b shown as A.${c.results.length > shown ? ` The first ${shown} of ${c.results.length}; the API has them all.` : ""}`} />
        <Table data-testid="pairs">
          <thead>
            <tr>
              <Th>a</Th>
              <Th>b</Th>
              <Th>verdict, a shown first</Th>
              <Th>verdict, b shown first</Th>
              <Th>outcome</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {c.results.slice(0, shown).map((r, i) => (
              <tr key={i}>
                <Td>{conv(a, r.a)}</Td>
                <Td>{conv(bSide, r.b)}</Td>
                <Td title={r.reasoning_ab ?? undefined}>
                  <div className="font-medium">{verdictText(r.verdict_ab, "a", "b")}</div>
                  {r.reasoning_ab ? <div className="max-w-xs truncate text-xs text-slate-500">{r.reasoning_ab}</div> : null}
                </Td>
                <Td title={r.reasoning_ba ?? undefined}>
                  <div className="font-medium">{verdictText(r.verdict_ba, "b", "a")}</div>
                  {r.reasoning_ba ? <div className="max-w-xs truncate text-xs text-slate-500">{r.reasoning_ba}</div> : null}
                </Td>
                <Td>
                  {outcomeBadge(r.outcome, r.error)}
                  {r.error ? <div className="mt-1 max-w-xs text-xs text-red-700">{r.error}</div> : null}
                </Td>
              </tr>
            ))}
          </tbody>
        </Table>
      </Card>
    </div>
  );
}
