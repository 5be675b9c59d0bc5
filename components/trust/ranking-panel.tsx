import Link from "next/link";
import { Card, CardHeader } from "@/components/ui/card";
import { cellHref, fmt, sourceLabel, type EntityRef } from "./agreement-format";

export type Ranking = {
  items: number;
  groups: number;
  pairs: number;
  pairwise_accuracy: number | null;
  pairwise_interval: [number, number] | null;
  ties: number;
  mean_spearman: number | null;
  spearman_interval: [number, number] | null;
  spearman_undefined: number;
  discordant: Array<{ better: EntityRef; worse: EntityRef; judge_better: number; judge_worse: number }>;
};

/** Agreement with human ranks among sibling replies (message trees): pairwise accuracy and mean Spearman. */
export function RankingPanel({ datasetId, ranking, source }: { datasetId: number; ranking: Ranking; source: string }) {
  const iv = (x: [number, number] | null) => (x ? `[${fmt(x[0])}, ${fmt(x[1])}]` : "");
  return (
    <Card data-testid="ranking-agreement">
      <CardHeader
        title="Against human rankings"
        description={`${sourceLabel(source)} on ${ranking.items} ranked replies to ${ranking.groups} prompts (meta.rank among siblings, 0 = best) · 95% intervals`}
      />
      <table className="w-full text-sm">
        <tbody>
          <tr className="border-b border-slate-100">
            <th className="px-5 py-2 text-left font-medium text-slate-600">Pairwise accuracy</th>
            <td className="px-5 py-2 font-mono" data-testid="ranking-pairwise">
              {fmt(ranking.pairwise_accuracy)}
            </td>
            <td className="px-5 py-2 text-xs text-slate-500">
              {iv(ranking.pairwise_interval)} Wilson · {ranking.pairs} pairs ranked differently by people ·{" "}
              <span data-testid="ranking-ties">
                {ranking.ties === ranking.pairs && ranking.pairs > 0 ? "every one" : ranking.ties} scored alike by the judge
              </span>{" "}
              (ties, counted half)
            </td>
          </tr>
          <tr>
            <th className="px-5 py-2 text-left font-medium text-slate-600">Mean Spearman ρ per prompt</th>
            <td className="px-5 py-2 font-mono" data-testid="ranking-spearman">
              {fmt(ranking.mean_spearman)}
            </td>
            <td className="px-5 py-2 text-xs text-slate-500">
              {ranking.mean_spearman === null
                ? `undefined: the judge scored every reply alike in ${ranking.spearman_undefined === 1 ? "the one prompt" : `all ${ranking.spearman_undefined} prompts`}, so there is no order to correlate`
                : `${iv(ranking.spearman_interval)} ± 1.96 s/√g${ranking.spearman_undefined ? ` · ${ranking.spearman_undefined} prompt${ranking.spearman_undefined === 1 ? "" : "s"} left out where the judge scored every reply alike` : ""}`}
            </td>
          </tr>
        </tbody>
      </table>
      {ranking.discordant.length ? (
        <div className="border-t border-slate-100 px-5 py-3 text-xs">
          <p className="mb-1 font-medium text-slate-600">Ordered the other way round ({ranking.discordant.length})</p>
          <ul className="space-y-0.5">
            {ranking.discordant.slice(0, 10).map((p) => (
              <li key={`${p.better.entity_id}-${p.worse.entity_id}`}>
                <Link href={cellHref(datasetId, p.better)} className="text-brand-700 hover:underline">
                  people&apos;s better #{p.better.entity_id}
                </Link>{" "}
                got {p.judge_better.toFixed(2)}, {" "}
                <Link href={cellHref(datasetId, p.worse)} className="text-brand-700 hover:underline">
                  worse #{p.worse.entity_id}
                </Link>{" "}
                got {p.judge_worse.toFixed(2)}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </Card>
  );
}
