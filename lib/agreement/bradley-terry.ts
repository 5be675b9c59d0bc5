/**
 * Bradley–Terry strengths over pairwise outcomes (issue 38.5), pure: P(i beats j) = p_i / (p_i + p_j),
 * fitted by Hunter's (2004) MM iteration, a tie counting half a win to each side. Strengths are
 * normalised to sum to 1; intervals are a percentile bootstrap that redraws each comparison's pairs.
 */
import type { Outcome } from "./pairwise";
import { seededRandom } from "./regression";
import type { Interval } from "./stats";

/** One comparison between two candidates (indices into the candidate list) and its pairs' outcomes. */
export type Contest = { a: number; b: number; outcomes: readonly Outcome[] };

/** wins[i][j]: how often i beat j (ties half each). */
function winMatrix(n: number, contests: readonly Contest[], draw?: (c: Contest) => readonly Outcome[]): number[][] {
  const wins = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (const c of contests) {
    for (const o of draw ? draw(c) : c.outcomes) {
      if (o === "a") wins[c.a][c.b] += 1;
      else if (o === "b") wins[c.b][c.a] += 1;
      else {
        wins[c.a][c.b] += 0.5;
        wins[c.b][c.a] += 0.5;
      }
    }
  }
  return wins;
}

/** The maximum-likelihood strengths (sum 1) of n candidates from a win matrix. */
export function fitBradleyTerry(wins: readonly (readonly number[])[], opts: { maxIterations?: number; tolerance?: number } = {}): number[] {
  const n = wins.length;
  let p = new Array<number>(n).fill(1 / n);
  const total = wins.map((row) => row.reduce((s, w) => s + w, 0));
  for (let it = 0; it < (opts.maxIterations ?? 10_000); it++) {
    const next = p.map((pi, i) => {
      let denom = 0;
      for (let j = 0; j < n; j++) {
        const games = wins[i][j] + wins[j][i];
        if (j === i || games === 0 || pi + p[j] === 0) continue;
        denom += games / (pi + p[j]);
      }
      return denom === 0 ? pi : total[i] / denom;
    });
    const sum = next.reduce((s, x) => s + x, 0) || 1;
    const normalised = next.map((x) => x / sum);
    const change = Math.max(...normalised.map((x, i) => Math.abs(x - p[i])));
    p = normalised;
    if (change < (opts.tolerance ?? 1e-12)) break;
  }
  return p;
}

/** Whether every candidate is linked to every other through contests (else strengths are not comparable). */
export function connected(n: number, contests: readonly Contest[]): boolean {
  if (n === 0) return true;
  const seen = new Set([0]);
  const stack = [0];
  while (stack.length) {
    const i = stack.pop()!;
    for (const c of contests) {
      for (const [x, y] of [[c.a, c.b], [c.b, c.a]]) {
        if (x === i && !seen.has(y) && c.outcomes.length > 0) {
          seen.add(y);
          stack.push(y);
        }
      }
    }
  }
  return seen.size === n;
}

/** Strengths of n candidates with percentile-bootstrap 95% intervals (seeded: the same answer twice). */
export function bradleyTerry(n: number, contests: readonly Contest[], opts: { iterations?: number; seed?: number } = {}): Array<{ strength: number; interval: Interval }> {
  const strengths = fitBradleyTerry(winMatrix(n, contests));
  const iterations = opts.iterations ?? 1000;
  const random = seededRandom(opts.seed ?? 1);
  const draws: number[][] = Array.from({ length: n }, () => []);
  for (let b = 0; b < iterations; b++) {
    const redraw = (c: Contest) => c.outcomes.map(() => c.outcomes[Math.floor(random() * c.outcomes.length)]);
    fitBradleyTerry(winMatrix(n, contests, redraw), { maxIterations: 2_000, tolerance: 1e-9 }).forEach((p, i) => draws[i].push(p));
  }
  return strengths.map((strength, i) => {
    const sorted = draws[i].sort((x, y) => x - y);
    const at = (q: number) => sorted[Math.min(iterations - 1, Math.max(0, Math.round(q * (iterations - 1))))];
    return { strength, interval: iterations ? [at(0.025), at(0.975)] : [strength, strength] };
  });
}
