/**
 * The best any client can do against a provider that refuses a share of calls at random with a
 * Retry-After, when it honours that Retry-After: a discrete-event model of one run — `cells` calls,
 * `slots` in flight, each answered after `latencyMs`; a refused call (probability `refuseShare`, drawn
 * per call) holds no slot while it waits `retryAfterMs` and then goes first. No jitter, no overhead, no
 * limit cuts: an ideal client. The served bench compares the measured 429-only ratio with this bound
 * (docs/performance.md): on a short run the longest chain of refusals of any one cell, a second each, is
 * most of the run's time, whatever the client does.
 */
import { mulberry32 } from "@/lib/testing/judge-double/behaviours";

export type RetryTailModel = { cells: number; slots: number; latencyMs: number; refuseShare: number; retryAfterMs: number; seed: number };

/** The run's duration in ms under the model. */
export function modelRunMs(m: RetryTailModel): number {
  const random = mulberry32(m.seed);
  const fresh = { next: 0 };
  const due: number[] = []; // retries whose wait is over, first in line
  const waiting: number[] = []; // times at which a waiting retry is due (kept sorted)
  const inFlight: number[] = []; // answer times (kept sorted)
  let free = m.slots;
  let done = 0;
  let now = 0;
  const insert = (list: number[], t: number) => {
    let i = list.length;
    while (i > 0 && list[i - 1] > t) i--;
    list.splice(i, 0, t);
  };
  while (done < m.cells) {
    while (free > 0 && (due.length > 0 || fresh.next < m.cells)) {
      if (due.length) due.shift();
      else fresh.next++;
      free--;
      insert(inFlight, now + m.latencyMs);
    }
    const nextAnswer = inFlight.length ? inFlight[0] : Infinity;
    const nextDue = waiting.length ? waiting[0] : Infinity;
    if (nextDue < nextAnswer) {
      now = waiting.shift()!;
      due.push(now);
      continue;
    }
    now = inFlight.shift()!;
    free++;
    if (random() < m.refuseShare) insert(waiting, now + m.retryAfterMs);
    else done++;
  }
  return now;
}

/** The ratio of the refusing run's throughput to the clean run's, over `runs` seeds: mean and range. */
export function idealRatio(m: Omit<RetryTailModel, "seed">, runs = 200) {
  const clean = modelRunMs({ ...m, refuseShare: 0, seed: 1 });
  const ratios = Array.from({ length: runs }, (_, seed) => clean / modelRunMs({ ...m, seed: seed + 1 })).sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return { mean: r(ratios.reduce((a, b) => a + b, 0) / runs), p10: r(ratios[Math.floor(runs * 0.1)]), p90: r(ratios[Math.floor(runs * 0.9)]), runs };
}
