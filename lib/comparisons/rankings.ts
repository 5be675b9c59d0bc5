/**
 * Bradley–Terry strengths over several comparisons of one pairwise metric (issue 38.5): each comparison's
 * sides are candidates (dataset:<id> / generation:<id> as the comparison named them), its pairs' outcomes
 * the games between them. The statistics are lib/agreement's.
 */
import "server-only";
import { getComparisons, listPairs } from "@/db/repositories/comparisons";
import { bradleyTerry, connected, type Contest, type Outcome } from "@/lib/agreement";
import { AppError } from "@/lib/errors";
import { getMetricRow } from "@/lib/metrics";
import type { Rankings } from "@/lib/schemas/comparisons";

export async function getRankings(q: { pipeline_node_id: number; comparisons: number[]; iterations: number; seed: number }): Promise<Rankings> {
  const node = await getMetricRow(q.pipeline_node_id);
  const rows = await getComparisons(q.comparisons);
  const missing = q.comparisons.filter((id) => !rows.some((r) => r.id === id));
  if (missing.length) throw new AppError("not_found", `Comparison ${missing.join(", ")} does not exist`, [{ path: "comparisons", message: `no comparison ${missing.join(", ")}` }]);
  const refuse = (message: string, detail: string) => {
    throw new AppError("unprocessable", message, [{ path: "comparisons", message: detail }]);
  };
  const other = rows.filter((r) => r.pipelineNodeId !== node.id);
  if (other.length) refuse(`Comparison ${other.map((r) => r.id).join(", ")} was judged by another metric than ${node.id}: strengths only add up under one judge`, "must be comparisons of this metric");
  const siblings = rows.filter((r) => r.bSource === null);
  if (siblings.length) refuse(`Comparison ${siblings.map((r) => r.id).join(", ")} compares replies within one side (siblings): it has no two candidates to rank`, "must be comparisons of two sides");
  const unfinished = rows.filter((r) => r.status === "pending" || r.status === "processing");
  if (unfinished.length) {
    throw new AppError("conflict", `Comparison ${unfinished.map((r) => r.id).join(", ")} is still running: rank once it has ended`, [{ path: "comparisons", message: "must have ended" }]);
  }
  const candidates: string[] = [];
  const indexOf = (c: string) => {
    if (!candidates.includes(c)) candidates.push(c);
    return candidates.indexOf(c);
  };
  const contests: Contest[] = [];
  for (const r of rows) {
    const outcomes = (await listPairs(r.id)).map((p) => p.outcome).filter((o): o is Outcome => o !== null);
    contests.push({ a: indexOf(r.aSource), b: indexOf(r.bSource!), outcomes });
  }
  if (candidates.length < 2) refuse("Rankings need at least two candidates", "name comparisons between at least two sides");
  if (!connected(candidates.length, contests)) {
    refuse("The comparisons do not link every candidate to the others (through judged pairs): their strengths cannot be put on one scale", "add comparisons that connect the candidates");
  }
  const fitted = bradleyTerry(candidates.length, contests, { iterations: q.iterations, seed: q.seed });
  const tally = candidates.map(() => ({ wins: 0, losses: 0, ties: 0 }));
  for (const c of contests) {
    for (const o of c.outcomes) {
      if (o === "tie") {
        tally[c.a].ties++;
        tally[c.b].ties++;
      } else {
        const [w, l] = o === "a" ? [c.a, c.b] : [c.b, c.a];
        tally[w].wins++;
        tally[l].losses++;
      }
    }
  }
  return {
    pipeline_node_id: node.id,
    comparisons: rows.map((r) => r.id),
    iterations: q.iterations,
    candidates: candidates
      .map((candidate, i) => ({ candidate, strength: fitted[i].strength, interval: fitted[i].interval, ...tally[i] }))
      .sort((x, y) => y.strength - x.strength),
  };
}
