/**
 * The statistics of judge agreement, exact and free of I/O: accuracy with a Wilson interval, Cohen's
 * kappa with its large-sample standard-error interval, Spearman's rank correlation (average ranks for
 * ties) with a Fisher-z interval, and mean absolute error with a normal interval. Every interval is a
 * two-sided 95% interval.
 */

/** The 97.5th percentile of the standard normal distribution. */
export const Z95 = 1.959963984540054;

export type Interval = [number, number];

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

/** Wilson score interval of a proportion k/n; null when n is 0. */
export function wilsonInterval(k: number, n: number, z = Z95): Interval | null {
  if (n <= 0) return null;
  const p = k / n;
  const z2 = z * z;
  const centre = p + z2 / (2 * n);
  const spread = z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  const denom = 1 + z2 / n;
  // At k = 0 and k = n the bound is exactly 0 or 1; rounding would leave 1e-17 or 0.9999999999999999.
  const lo = k === 0 ? 0 : clamp((centre - spread) / denom, 0, 1);
  const hi = k === n ? 1 : clamp((centre + spread) / denom, 0, 1);
  return [lo, hi];
}

export type KappaResult = {
  kappa: number;
  /** Observed agreement. */
  po: number;
  /** Agreement expected by chance from the two marginals. */
  pe: number;
  /** Cohen's (1960) large-sample standard error: sqrt(po(1 − po) / (n (1 − pe)²)). */
  se: number;
  interval: Interval;
};

/**
 * Cohen's kappa of paired categorical ratings. Null when there are no pairs or when chance agreement is
 * already 1 (both raters used one and the same category throughout), where kappa is undefined. The
 * interval is kappa ± z·se, clipped to [−1, 1].
 */
export function cohensKappa(pairs: ReadonlyArray<readonly [string, string]>, z = Z95): KappaResult | null {
  const n = pairs.length;
  if (n === 0) return null;
  const countA = new Map<string, number>();
  const countB = new Map<string, number>();
  let agree = 0;
  for (const [a, b] of pairs) {
    countA.set(a, (countA.get(a) ?? 0) + 1);
    countB.set(b, (countB.get(b) ?? 0) + 1);
    if (a === b) agree++;
  }
  const po = agree / n;
  let pe = 0;
  for (const [category, ca] of countA) pe += (ca / n) * ((countB.get(category) ?? 0) / n);
  if (pe >= 1) return null;
  const kappa = (po - pe) / (1 - pe);
  const se = Math.sqrt((po * (1 - po)) / (n * (1 - pe) * (1 - pe)));
  return { kappa, po, pe, se, interval: [clamp(kappa - z * se, -1, 1), clamp(kappa + z * se, -1, 1)] };
}

/** 1-based ranks, tied values sharing the average of the ranks they span. */
export function averageRanks(values: readonly number[]): number[] {
  const order = values.map((v, i) => [v, i] as const).sort((x, y) => x[0] - y[0]);
  const ranks = new Array<number>(values.length);
  let i = 0;
  while (i < order.length) {
    let j = i;
    while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
    // Positions i..j (0-based) hold ranks i+1..j+1; their average is (i + j)/2 + 1.
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[order[k][1]] = rank;
    i = j + 1;
  }
  return ranks;
}

/** Pearson correlation; null when either side has no variance. */
export function pearson(xs: readonly number[], ys: readonly number[]): number | null {
  const n = xs.length;
  if (n === 0 || n !== ys.length) return null;
  const mx = xs.reduce((s, x) => s + x, 0) / n;
  const my = ys.reduce((s, y) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i] - mx;
    const dy = ys[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0 || syy === 0) return null;
  return clamp(sxy / Math.sqrt(sxx * syy), -1, 1);
}

export type SpearmanResult = {
  rho: number;
  /** Fisher-z interval tanh(atanh(rho) ± z / sqrt(n − 3)); null below 4 pairs. */
  interval: Interval | null;
};

/**
 * Spearman's rank correlation: the Pearson correlation of average ranks, which is exact with ties.
 * Null below 2 pairs or when one side is constant.
 */
export function spearman(xs: readonly number[], ys: readonly number[], z = Z95): SpearmanResult | null {
  if (xs.length < 2 || xs.length !== ys.length) return null;
  const rho = pearson(averageRanks(xs), averageRanks(ys));
  if (rho === null) return null;
  const n = xs.length;
  if (n < 4) return { rho, interval: null };
  const half = z / Math.sqrt(n - 3);
  // atanh(±1) is ±Infinity and tanh brings it back to ±1: a perfect correlation has a point interval.
  const fz = Math.atanh(rho);
  return { rho, interval: [Math.tanh(fz - half), Math.tanh(fz + half)] };
}

export type MaeResult = {
  mae: number;
  /** mae ± z·s/√n with s the sample standard deviation of the absolute errors, floored at 0; null below 2 pairs. */
  interval: Interval | null;
};

/** Mean absolute error of paired scores; null without pairs. */
export function meanAbsoluteError(xs: readonly number[], ys: readonly number[], z = Z95): MaeResult | null {
  const n = xs.length;
  if (n === 0 || n !== ys.length) return null;
  const errors = xs.map((x, i) => Math.abs(x - ys[i]));
  const mae = errors.reduce((s, e) => s + e, 0) / n;
  if (n < 2) return { mae, interval: null };
  const variance = errors.reduce((s, e) => s + (e - mae) * (e - mae), 0) / (n - 1);
  const half = z * Math.sqrt(variance / n);
  return { mae, interval: [Math.max(0, mae - half), mae + half] };
}
