/**
 * The judge's answer to a provider's tail: a per-call time limit learnt from the provider's observed
 * latency, and a hedged second request for a call slower than the observed p95.
 *
 *  - Time limit: `multiple × p99` of the last answered calls of the model, clamped to
 *    [floor, ceiling] (JUDGE_TIMEOUT_P99_MULTIPLE, JUDGE_TIMEOUT_FLOOR_MS, JUDGE_TIMEOUT_MS). Until
 *    enough calls have answered (MIN_SAMPLES) the ceiling applies. A call with no answer by then is
 *    aborted and fails as a time-out (and is retried). The limit of a call in flight follows the
 *    estimate: a call sent before the first answers are in is held to the learnt limit once there is one.
 *  - A provider that became slow (most recent calls time out, not a few hung ones) would otherwise time
 *    out every call and never be measured again: when at least half of the last calls that ended in an
 *    answer or a time-out timed out (and at least SLOW_MIN of them), the samples are dropped and the
 *    ceiling applies until the provider's new latency has been learnt.
 *  - Hedge: once a call has gone unanswered past the observed p95 (and at least HEDGE_FLOOR_MS), a second identical request is sent;
 *    the first answer wins and the other request is aborted. Hedges are bounded by a budget (at most
 *    HEDGE_BUDGET of the calls sent, as a token bucket), so a slow provider is not sent twice the load.
 *    Only the winner's reply (and its tokens) is used. A failed request (429, 5xx, time-out) does not
 *    end the call while the other is still out; when both fail, the call fails with the more telling
 *    error (an answer from the provider rather than a time-out).
 * The clock (`now`, `setTimeout`) is injected so tests drive time by hand.
 */
import { processSingleton } from "@/lib/process-state";
import { JudgeTimeoutError } from "./call";

export type TailSettings = {
  /** The ceiling, and the limit until the provider's latency is learnt (JUDGE_TIMEOUT_MS). */
  timeoutMs: number;
  /** The learnt limit is never below this (JUDGE_TIMEOUT_FLOOR_MS). */
  timeoutFloorMs: number;
  /** The learnt limit is this multiple of the observed p99 (JUDGE_TIMEOUT_P99_MULTIPLE). */
  timeoutP99Multiple: number;
  /** Send a second request for a call past the observed p95 (JUDGE_HEDGE). */
  hedge: boolean;
  /** No hedge before a call has been out this long, whatever the p95 (HEDGE_FLOOR_MS; tests set their own). */
  hedgeFloorMs?: number;
};

/**
 * A call is hedged no sooner than this after it went out. Below it a second request saves less time than
 * it costs: the provider bills a request it has begun, and against a provider answering in a few ms (the
 * p95 of a fast provider, or of our own queueing under load) 2% of a CPU-bound run's calls were sent twice.
 */
export const HEDGE_FLOOR_MS = 250;

export type Clock = {
  now: () => number;
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (handle: unknown) => void;
};

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** Answered calls kept per model for the percentiles. */
export const SAMPLES = 200;
/** Answered calls needed before the limit is learnt and hedging starts. */
export const MIN_SAMPLES = 20;
/** Share of calls that may be hedged (extra requests at most this fraction of the calls sent). */
export const HEDGE_BUDGET = 0.2;
/** Hedges that may be saved up while the provider is healthy. */
const HEDGE_BURST = 10;
/** Outcomes (answer or time-out) looked at to tell a slow provider from a few hung calls. */
const SLOW_WINDOW = 20;
const SLOW_MIN = 5;

/** Latency of one model's answered calls, and its hedge budget. One per model per process. */
export class LatencyTracker {
  private readonly samples: number[] = [];
  private next = 0;
  /** The samples in order, kept so as each answer comes in: sorting them anew for every call's time limit cost ~5% of a served run's CPU. */
  private readonly sorted: number[] = [];
  private readonly outcomes: boolean[] = []; // true: timed out
  private tokens = 0;
  hedgesSent = 0;
  timeouts = 0;

  /** An answered call took `ms` from send to answer. */
  recordAnswer(ms: number): void {
    if (this.samples.length < SAMPLES) this.samples.push(ms);
    else {
      this.sorted.splice(lowerBound(this.sorted, this.samples[this.next]), 1);
      this.samples[this.next] = ms;
    }
    this.sorted.splice(lowerBound(this.sorted, ms), 0, ms);
    this.next = (this.next + 1) % SAMPLES;
    this.outcome(false);
  }

  /** A call hit the time limit. */
  recordTimeout(): void {
    this.timeouts++;
    this.outcome(true);
    const timedOut = this.outcomes.filter(Boolean).length;
    if (timedOut >= SLOW_MIN && timedOut * 2 >= this.outcomes.length) {
      // The provider is slow, not a few calls hung: forget the old latency, use the ceiling, learn again.
      this.samples.length = 0;
      this.next = 0;
      this.sorted.length = 0;
      this.outcomes.length = 0;
    }
  }

  private outcome(timedOut: boolean) {
    this.outcomes.push(timedOut);
    if (this.outcomes.length > SLOW_WINDOW) this.outcomes.shift();
  }

  get count(): number {
    return this.samples.length;
  }

  /** The q-quantile of the answered calls' latency (nearest rank), or undefined before MIN_SAMPLES. */
  quantile(q: number): number | undefined {
    if (this.samples.length < MIN_SAMPLES) return undefined;
    const i = Math.min(this.sorted.length - 1, Math.max(0, Math.ceil(q * this.sorted.length) - 1));
    return this.sorted[i];
  }

  /** The time limit of a call now: multiple × p99 within [floor, ceiling]; the ceiling until learnt. */
  timeoutMs(s: TailSettings): number {
    const p99 = this.quantile(0.99);
    if (p99 === undefined) return s.timeoutMs;
    return Math.round(Math.min(s.timeoutMs, Math.max(s.timeoutFloorMs, s.timeoutP99Multiple * p99)));
  }

  /** When a call still unanswered gets a hedge: the observed p95, at least `floorMs` (undefined before MIN_SAMPLES). */
  hedgeAfterMs(floorMs = 0): number | undefined {
    const p95 = this.quantile(0.95);
    return p95 === undefined ? undefined : Math.max(p95, floorMs);
  }

  /** A call was sent: it earns a share of a hedge. */
  earn(): void {
    this.tokens = Math.min(HEDGE_BURST, this.tokens + HEDGE_BUDGET);
  }

  /** Take a hedge from the budget if there is one. */
  spend(): boolean {
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    this.hedgesSent++;
    return true;
  }
}

/** The first index of a sorted array whose value is not below `x`. */
function lowerBound(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const trackers = processSingleton("judge.latency", () => new Map<string, LatencyTracker>());

/** The process-wide latency tracker of a model. */
export function trackerFor(model: string): LatencyTracker {
  let t = trackers.get(model);
  if (!t) trackers.set(model, (t = new LatencyTracker()));
  return t;
}

/** Aborts the request that lost the race: its answer is not needed. */
export class HedgeLostError extends Error {
  override name = "AbortError";
  constructor() {
    super("the other request of this hedged call answered first");
  }
}

export type Role = "primary" | "hedge";

/**
 * One request to the provider. `signal` aborts it (the learnt time limit, the other request's win, the
 * caller's cancel); `sent()` must be called once the request actually goes out (after any wait for a
 * slot), which starts its clock. Throws the provider's error or the signal's reason.
 */
export type SendOnce<T> = (role: Role, signal: AbortSignal, sent: () => void) => Promise<T>;

/** `abandoned`: requests of the call that were sent and then aborted unanswered when the winner answered. */
export type HedgedResult<T> = { value: T; winner: Role; hedged: boolean; abandoned: number; timeoutMs: number };

/** A call failed: `error` is what to report, `timeoutMs` the limit a time-out hit (if it was one). */
export class HedgedCallError extends Error {
  constructor(
    readonly error: unknown,
    readonly hedged: boolean,
    readonly timeoutMs: number | undefined,
  ) {
    super((error as Error)?.message ?? String(error));
  }
}

type Leg = { role: Role; controller: AbortController; sentAt?: number; timeoutMs?: number; done: boolean; error?: unknown; timedOut?: boolean };

/**
 * Make one call with a learnt time limit and, past the observed p95, a hedge. Resolves with the first
 * answer; rejects with a HedgedCallError once every request sent has failed, or with the caller's
 * abort reason when `signal` aborts.
 */
export function hedgedCall<T>(
  send: SendOnce<T>,
  opts: { tracker: LatencyTracker; settings: TailSettings; signal?: AbortSignal; clock?: Clock },
): Promise<HedgedResult<T>> {
  const { tracker, settings, signal } = opts;
  const clock = opts.clock ?? realClock;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<HedgedResult<T>>((resolve, reject) => {
    const legs: Leg[] = [];
    let settled = false;
    let timer: unknown;
    let hedgeDue = settings.hedge; // at most one hedge per call

    const finish = () => {
      settled = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      signal?.removeEventListener("abort", onCancel);
    };
    function onCancel() {
      if (settled) return;
      finish();
      for (const l of legs) if (!l.done) l.controller.abort(signal?.reason);
      reject(signal?.reason);
    }
    signal?.addEventListener("abort", onCancel, { once: true });

    /** Look at the legs in flight now: time out the overdue, hedge a slow primary; then wait for the next moment that matters. */
    const watch = () => {
      timer = undefined;
      if (settled) return;
      const now = clock.now();
      const limit = tracker.timeoutMs(settings);
      let nextAt = Infinity;
      for (const l of legs) {
        if (l.done || l.sentAt === undefined) continue;
        if (now - l.sentAt >= limit) {
          l.timedOut = true;
          l.timeoutMs = limit;
          l.controller.abort(new JudgeTimeoutError(`judge call timed out after ${limit} ms`));
        } else nextAt = Math.min(nextAt, l.sentAt + limit);
      }
      const primary = legs[0];
      if (hedgeDue && primary && !primary.done && primary.sentAt !== undefined && legs.length === 1) {
        const after = tracker.hedgeAfterMs(settings.hedgeFloorMs);
        if (after === undefined) {
          // Not learnt yet: look again when it may be (a call sent before the first answers came in).
          nextAt = Math.min(nextAt, now + Math.min(settings.timeoutFloorMs, 250));
        } else if (now - primary.sentAt >= after) {
          hedgeDue = false;
          if (tracker.spend()) start("hedge");
        } else nextAt = Math.min(nextAt, primary.sentAt + after);
      } else if (legs.some((l) => !l.done && l.sentAt !== undefined) && tracker.hedgeAfterMs() === undefined) {
        // The limit may still be learnt while this call is out.
        nextAt = Math.min(nextAt, now + Math.min(settings.timeoutFloorMs, 250));
      }
      if (nextAt < Infinity) timer = clock.setTimeout(watch, Math.max(1, nextAt - now));
    };
    const rewatch = () => {
      if (timer !== undefined) clock.clearTimeout(timer);
      watch();
    };

    const start = (role: Role) => {
      const leg: Leg = { role, controller: new AbortController(), done: false };
      legs.push(leg);
      if (role === "primary") tracker.earn();
      let p: Promise<T>;
      try {
        p = send(role, leg.controller.signal, () => {
          if (leg.sentAt !== undefined || settled) return;
          leg.sentAt = clock.now();
          rewatch();
        });
      } catch (error) {
        p = Promise.reject(error);
      }
      p.then(
        (value) => {
          leg.done = true;
          if (settled) return;
          if (leg.sentAt !== undefined) tracker.recordAnswer(clock.now() - leg.sentAt);
          finish();
          let abandoned = 0;
          for (const l of legs) {
            if (l.done) continue;
            if (l.sentAt !== undefined) abandoned++;
            l.controller.abort(new HedgeLostError());
          }
          resolve({ value, winner: role, hedged: legs.length > 1, abandoned, timeoutMs: tracker.timeoutMs(settings) });
        },
        (error: unknown) => {
          leg.done = true;
          leg.error = error;
          if (settled) return;
          if (leg.timedOut) tracker.recordTimeout();
          if (legs.some((l) => !l.done)) return; // the other request may still answer
          finish();
          // An answer from the provider (429, 5xx) says more than a time-out, and carries Retry-After.
          const telling = legs.find((l) => !l.timedOut) ?? legs[0];
          reject(new HedgedCallError(telling.error, legs.length > 1, telling.timedOut ? telling.timeoutMs : undefined));
        },
      );
    };
    start("primary");
  });
}
