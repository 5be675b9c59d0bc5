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

/**
 * A score at the precision scores are compared at: 9 decimals, and 12 significant digits for large values.
 * Averaging copies of one score leaves binary noise (six copies of 0.8 average to 0.7999999999999999),
 * which an exact comparison would read as an order; at this precision equal scores are ties.
 */
export function atScorePrecision(x: number): number {
  if (!Number.isFinite(x)) return x;
  return Number((Math.round(x * 1e9) / 1e9).toPrecision(12));
}

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

/** 1-based ranks, tied values (equal at score precision) sharing the average of the ranks they span. */
export function averageRanks(values: readonly number[]): number[] {
  const order = values.map((v, i) => [atScorePrecision(v), i] as const).sort((x, y) => x[0] - y[0]);
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

export type WeightedKappaResult = {
  kappa: number;
  /** The ordered categories (distinct values of both sides). */
  levels: number[];
};

/**
 * Cohen's weighted kappa with quadratic weights over ordered numeric ratings: 1 − Σ w·O / Σ w·E, where
 * O are the observed pair proportions, E the products of the marginals, and w_ij = ((x_i − x_j) / range)²
 * from the values themselves (so a 0.8 against a 0.75 costs little and a 1 against a 0 costs the most).
 * Null without pairs, or when every rating is the same value (nothing to weigh).
 */
export function weightedKappa(pairs: ReadonlyArray<readonly [number, number]>): WeightedKappaResult | null {
  const n = pairs.length;
  if (n === 0) return null;
  const levels = [...new Set(pairs.flat().map(atScorePrecision))].sort((x, y) => x - y);
  const range = levels[levels.length - 1] - levels[0];
  if (range === 0) return null;
  const index = new Map(levels.map((v, i) => [v, i]));
  const k = levels.length;
  const observed = Array.from({ length: k }, () => new Array<number>(k).fill(0));
  const rowTotals = new Array<number>(k).fill(0);
  const colTotals = new Array<number>(k).fill(0);
  for (const [a, b] of pairs) {
    const i = index.get(atScorePrecision(a))!;
    const j = index.get(atScorePrecision(b))!;
    observed[i][j] += 1 / n;
    rowTotals[i] += 1 / n;
    colTotals[j] += 1 / n;
  }
  let wo = 0;
  let we = 0;
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      const w = ((levels[i] - levels[j]) / range) ** 2;
      wo += w * observed[i][j];
      we += w * rowTotals[i] * colTotals[j];
    }
  }
  if (we === 0) return null;
  return { kappa: 1 - wo / we, levels };
}

export type RankingGroup<R> = { key: string; items: ReadonlyArray<{ judge: number; rank: number; ref: R }> };

export type RankingAgreement<R> = {
  /** Groups (e.g. sibling replies to one prompt) with at least two ranked items. */
  groups: number;
  /** Pairs of siblings people ranked differently. */
  pairs: number;
  /** Share of those pairs the judge orders as people did (a judge tie counts half). */
  pairwise_accuracy: number | null;
  /** Of those pairs, the ones the judge scored alike (equal at score precision): neither agreeing nor reversed. */
  ties: number;
  /** Wilson 95% interval of pairwise accuracy (ties counted half, rounded to the nearest pair). */
  pairwise_interval: Interval | null;
  /** Mean over groups of Spearman's rho between the judge's scores and the human order. */
  mean_spearman: number | null;
  /** mean ± 1.96·s/√g over the g groups with a defined rho. */
  spearman_interval: Interval | null;
  /** Groups whose rho is undefined (the judge gave every sibling the same score). */
  spearman_undefined: number;
  /** Pairs the judge ordered the other way round (a strictly higher score for people's worse reply), largest reversal first. */
  discordant: Array<{ better: R; worse: R; judge_better: number; judge_worse: number }>;
};

/**
 * How well a judge's scores order sibling items the way people ranked them (rank 0 = best, as in Open
 * Assistant trees). Pairwise accuracy over every pair of siblings with different human ranks, and the
 * mean per-group Spearman correlation between the judge's score and the human order (−rank).
 */
export function rankingAgreement<R>(groups: ReadonlyArray<RankingGroup<R>>): RankingAgreement<R> {
  let used = 0;
  let pairs = 0;
  let concordant = 0;
  let ties = 0;
  const rhos: number[] = [];
  let undefinedRho = 0;
  const discordant: RankingAgreement<R>["discordant"] = [];
  for (const group of groups) {
    if (group.items.length < 2) continue;
    used++;
    // Scores compared at their precision: copies averaged to 0.7999999999999999 tie with 0.8.
    const items = group.items.map((it) => ({ ...it, judge: atScorePrecision(it.judge) }));
    for (let i = 0; i < items.length; i++) {
      for (let j = i + 1; j < items.length; j++) {
        if (items[i].rank === items[j].rank) continue;
        const [better, worse] = items[i].rank < items[j].rank ? [items[i], items[j]] : [items[j], items[i]];
        pairs++;
        if (better.judge > worse.judge) concordant += 1;
        else if (better.judge === worse.judge) {
          concordant += 0.5;
          ties++;
        }
        else discordant.push({ better: better.ref, worse: worse.ref, judge_better: better.judge, judge_worse: worse.judge });
      }
    }
    const rho = spearman(
      items.map((it) => it.judge),
      items.map((it) => -it.rank),
    );
    if (rho) rhos.push(rho.rho);
    else undefinedRho++;
  }
  const meanRho = rhos.length ? rhos.reduce((s, r) => s + r, 0) / rhos.length : null;
  let spearmanInterval: Interval | null = null;
  if (meanRho !== null && rhos.length >= 2) {
    const sd = Math.sqrt(rhos.reduce((s, r) => s + (r - meanRho) ** 2, 0) / (rhos.length - 1));
    const half = (Z95 * sd) / Math.sqrt(rhos.length);
    spearmanInterval = [clamp(meanRho - half, -1, 1), clamp(meanRho + half, -1, 1)];
  }
  discordant.sort((x, y) => y.judge_worse - y.judge_better - (x.judge_worse - x.judge_better));
  return {
    groups: used,
    pairs,
    pairwise_accuracy: pairs ? concordant / pairs : null,
    ties,
    pairwise_interval: wilsonInterval(Math.round(concordant), pairs),
    mean_spearman: meanRho,
    spearman_interval: spearmanInterval,
    spearman_undefined: undefinedRho,
    discordant,
  };
}
