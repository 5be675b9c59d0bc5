/**
 * Statistics of a regression gate, pure: McNemar's exact test for paired pass/fail verdicts and a paired
 * bootstrap interval for score deltas (seeded, so a gate gives the same answer twice).
 */
import type { Interval } from "./stats";

/** ln C(n, k), summed from logs so large n stays finite. */
function logChoose(n: number, k: number): number {
  let s = 0;
  for (let i = 1; i <= k; i++) s += Math.log(n - k + i) - Math.log(i);
  return s;
}

/**
 * McNemar's exact test: `worse` pairs passed before and fail now, `better` the other way round. Two-sided
 * p-value of the binomial test of the discordant pairs against an even split (1 when there are none).
 */
export function mcnemarExact(worse: number, better: number): number {
  const n = worse + better;
  if (n === 0) return 1;
  const k = Math.min(worse, better);
  let tail = 0;
  for (let i = 0; i <= k; i++) tail += Math.exp(logChoose(n, i) - n * Math.LN2);
  return Math.min(1, 2 * tail);
}

/** A small seeded generator (mulberry32): the bootstrap's draws are the same for the same seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The mean of paired deltas (now − before) with a percentile bootstrap 95% interval over the pairs;
 * null for no pairs. One pair's interval is the pair itself.
 */
export function pairedBootstrap(deltas: readonly number[], opts: { iterations?: number; seed?: number } = {}): { mean: number; interval: Interval } | null {
  const n = deltas.length;
  if (n === 0) return null;
  const mean = deltas.reduce((s, d) => s + d, 0) / n;
  const iterations = opts.iterations ?? 2000;
  const random = seededRandom(opts.seed ?? 1);
  const means: number[] = new Array(iterations);
  for (let b = 0; b < iterations; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += deltas[Math.floor(random() * n)];
    means[b] = s / n;
  }
  means.sort((x, y) => x - y);
  const at = (q: number) => means[Math.min(iterations - 1, Math.max(0, Math.round(q * (iterations - 1))))];
  return { mean, interval: [at(0.025), at(0.975)] };
}
