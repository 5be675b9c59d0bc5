import { outputTypeNames } from "@/components/grid/labels";
import { Badge } from "@/components/ui/badge";
import { formatScore } from "@/components/results/format";
import type { Aggregated } from "@/lib/schemas/executions";
import type { Metric } from "@/lib/schemas/metrics";
import { DistributionChart } from "./distribution-chart";

function Stat({ label, value }: { label: string; value: number | null }) {
  return (
    <div>
      <dt className="text-[11px] font-medium uppercase tracking-wide text-slate-500">{label}</dt>
      <dd className="text-lg font-semibold tabular-nums text-slate-900">{value == null ? "—" : formatScore(value)}</dd>
    </div>
  );
}

/** One metric's aggregates (a pass/fail metric: pass rate, passed, failed; a score: average, min, max, std dev, count) and its distribution chart. */
export function AggregateCard({ metric, nodeId, aggregated }: { metric: Metric | undefined; nodeId: string; aggregated: Aggregated }) {
  const name = metric?.name ?? `Metric ${nodeId}`;
  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm" aria-label={`${name} aggregates`} data-testid="aggregate-card">
      <div className="flex items-start justify-between gap-2">
        <h3 className="font-semibold text-slate-900">{name}</h3>
        {metric ? <Badge>{outputTypeNames[metric.output_type]}</Badge> : null}
      </div>
      {metric?.output_type === "checkbox" ? (
        // A pass/fail metric's mean of 1s and 0s is its pass rate: said as one ("AVERAGE 1" read as a score).
        <dl className="mt-3 grid grid-cols-3 gap-2" data-testid="aggregate-pass-rate">
          <div>
            <dt className="text-[11px] font-medium uppercase tracking-wide text-slate-500">Pass rate</dt>
            <dd className="text-lg font-semibold tabular-nums text-slate-900">{aggregated.average_score == null ? "—" : `${(aggregated.average_score * 100).toFixed(1)}%`}</dd>
          </div>
          <div>
            <dt className="text-[11px] font-medium uppercase tracking-wide text-slate-500">Passed</dt>
            <dd className="text-lg font-semibold tabular-nums text-slate-900">
              {aggregated.distribution.true ?? 0} of {aggregated.total}
            </dd>
          </div>
          <div>
            <dt className="text-[11px] font-medium uppercase tracking-wide text-slate-500">Failed</dt>
            <dd className="text-lg font-semibold tabular-nums text-slate-900">{aggregated.distribution.false ?? 0}</dd>
          </div>
        </dl>
      ) : (
        <dl className="mt-3 grid grid-cols-5 gap-2">
          <Stat label="Average" value={aggregated.average_score} />
          <Stat label="Min" value={aggregated.min_score} />
          <Stat label="Max" value={aggregated.max_score} />
          <Stat label="Std dev" value={aggregated.std_dev} />
          <Stat label="Count" value={aggregated.total} />
        </dl>
      )}
      <div className="mt-3">
        <DistributionChart type={metric?.output_type ?? "number"} distribution={aggregated.distribution} name={name} />
      </div>
    </section>
  );
}
