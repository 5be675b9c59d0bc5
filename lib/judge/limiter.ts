/**
 * Adaptive concurrency per model, shared by every running execution: TCP's AIMD, cut on a burst of 429s.
 * At most `limit` calls in flight. A provider that refuses now and then (an isolated 429, or a steady
 * share of refusals spread over many answers) does not lower the limit: the refused call waits its
 * Retry-After (holding no slot) and is sent again. A burst — within the last `burstWindowMs`, at least
 * `burstMin` 429s, and at least `burstShare` of the answers and of the calls in flight — means the
 * provider is over its limit: the
 * limit is halved once, new calls wait out the burst's Retry-After, and 429s of calls sent before the cut
 * do not cut again (they answered for the old limit). Each window of successes (as many as the limit)
 * adds one slot back, up to `max`.
 * A call with no answer after `stallMs` (4× the usual latency, at least 2 s) leaves the window: it goes
 * on until its own time limit, but a hung call no longer blocks the calls behind it. Calls in flight,
 * stalled ones included, never exceed `max`. A retry waiting out its Retry-After holds no slot, and
 * when it is due it goes to the front of the queue.
 */
import { processSingleton } from "@/lib/process-state";

/** A slot in flight: release it when the call ends. `epoch` counts the limit's cuts (for reports). */
export type Slot = { release: () => void; epoch: number; startedAt: number };

type Waiter = { resolve: (slot: Slot) => void; reject: (e: unknown) => void; signal?: AbortSignal; onAbort?: () => void };

export type LimiterStats = { limit: number; max: number; in_flight: number; stalled: number; waiting: number; rate_limits: number; cuts: number };

export type LimiterOptions = {
  minStallMs?: number;
  /** A burst: within `burstWindowMs`, at least `burstMin` 429s and `burstShare` of the answers and of the calls in flight. */
  burstWindowMs?: number;
  burstMin?: number;
  burstShare?: number;
  now?: () => number;
};

/** Defaults of a burst of 429s (documented in docs/performance.md, "Under a faulty provider"). */
export const BURST = { windowMs: 1000, min: 3, share: 0.5 };
/** The longest Retry-After the limiter pauses new calls for. */
const MAX_PAUSE_MS = 60_000;

export class AdaptiveLimiter {
  private limit: number;
  private active = 0;
  private stalled = 0;
  private successes = 0;
  private epoch = 0;
  private rateLimits = 0;
  private cuts = 0;
  /** Smoothed latency of answered calls, for the stall threshold. */
  private latencyMs = 0;
  private readonly minStallMs: number;
  private readonly waiting: Waiter[] = [];
  /** Answers within the burst window, oldest first: when, and whether it was a 429. */
  private readonly recent: Array<{ at: number; refused: boolean }> = [];
  private refusedInWindow = 0;
  /** After a burst: no new call before this (the provider's Retry-After). */
  private pausedUntil = 0;
  private pauseTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly burst: { windowMs: number; min: number; share: number };
  private readonly now: () => number;

  constructor(
    readonly max: number,
    opts: LimiterOptions = {},
  ) {
    this.limit = max;
    this.minStallMs = opts.minStallMs ?? 2000;
    this.burst = { windowMs: opts.burstWindowMs ?? BURST.windowMs, min: opts.burstMin ?? BURST.min, share: opts.burstShare ?? BURST.share };
    this.now = opts.now ?? Date.now;
  }

  get currentLimit(): number {
    return Math.max(1, this.limit);
  }

  get inFlight(): number {
    return this.active;
  }

  /** Figures for progress events, execution meta and the settings page. */
  stats(): LimiterStats {
    return { limit: this.currentLimit, max: this.max, in_flight: this.active, stalled: this.stalled, waiting: this.waiting.length, rate_limits: this.rateLimits, cuts: this.cuts };
  }

  /** How long a call may go without an answer before it stops counting against the limit. */
  get stallMs(): number {
    return Math.max(this.minStallMs, Math.round(4 * this.latencyMs));
  }

  /**
   * Wait for a slot; rejects with the signal's reason if aborted while waiting. `priority` (a retry
   * whose wait is over) goes ahead of calls that have not been tried yet.
   */
  acquire(signal?: AbortSignal, opts: { priority?: boolean } = {}): Promise<Slot> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.hasRoom()) {
      this.active++;
      return Promise.resolve(this.slot());
    }
    return new Promise((resolve, reject) => {
      const entry: Waiter = { resolve, reject, signal };
      if (signal) {
        entry.onAbort = () => {
          const i = this.waiting.indexOf(entry);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener("abort", entry.onAbort, { once: true });
      }
      if (opts.priority) this.waiting.unshift(entry);
      else this.waiting.push(entry);
    });
  }

  /**
   * A 429 answered a call sent in `epoch` (its slot's), with the provider's Retry-After if it gave one.
   * Counted always; the limit is halved only on a burst, and only by calls sent since the last cut.
   */
  onRateLimit(epoch?: number, retryAfterMs?: number): void {
    this.rateLimits++;
    if (epoch !== undefined && epoch < this.epoch) return;
    const now = this.now();
    this.remember(now, true);
    // Several refusals, and as many as `burstShare` of the window's answers and of the calls out now:
    // when the provider is over its limit most calls in flight are refused; a fifth of 32 calls
    // refused at random is no burst, even among the first few answers of a run.
    const needed = Math.max(this.burst.min, this.burst.share * this.recent.length, this.burst.share * (this.active + this.stalled));
    if (this.refusedInWindow < needed) return;
    // A burst: halve once, start a new epoch and a new window.
    this.limit = Math.max(1, Math.floor(this.limit / 2));
    this.epoch++;
    this.cuts++;
    this.successes = 0;
    this.recent.length = 0;
    this.refusedInWindow = 0;
    if (retryAfterMs !== undefined && retryAfterMs > 0) this.pause(now + Math.min(retryAfterMs, MAX_PAUSE_MS));
  }

  /** A call answered (`slot` gives its latency): a full window of successes grows the limit by one. */
  onSuccess(slot?: Slot): void {
    const now = this.now();
    if (slot) {
      const ms = now - slot.startedAt;
      this.latencyMs = this.latencyMs === 0 ? ms : 0.8 * this.latencyMs + 0.2 * ms;
    }
    this.remember(now, false);
    if (this.limit >= this.max) return;
    if (++this.successes >= this.currentLimit) {
      this.limit = Math.min(this.max, this.limit + 1);
      this.successes = 0;
      this.drain();
    }
  }

  private remember(now: number, refused: boolean) {
    this.recent.push({ at: now, refused });
    if (refused) this.refusedInWindow++;
    let drop = 0;
    while (drop < this.recent.length && now - this.recent[drop].at > this.burst.windowMs) {
      if (this.recent[drop].refused) this.refusedInWindow--;
      drop++;
    }
    // Bounded either way: a window holds at most the answers of the last burstWindowMs, and never more than 4096.
    if (this.recent.length - drop > 4096) {
      for (const r of this.recent.slice(drop, this.recent.length - 4096)) if (r.refused) this.refusedInWindow--;
      drop = this.recent.length - 4096;
    }
    if (drop) this.recent.splice(0, drop);
  }

  private pause(until: number) {
    if (until <= this.pausedUntil) return;
    this.pausedUntil = until;
    if (this.pauseTimer) clearTimeout(this.pauseTimer);
    this.pauseTimer = setTimeout(() => {
      this.pauseTimer = undefined;
      this.drain();
    }, until - this.now());
    this.pauseTimer.unref?.();
  }

  /** Until when new calls wait out a burst's Retry-After (0: not paused). */
  get pausedUntilMs(): number {
    return this.pausedUntil > this.now() ? this.pausedUntil : 0;
  }

  private hasRoom(): boolean {
    if (this.pausedUntil > this.now()) return false;
    return this.active < this.currentLimit && this.active + this.stalled < this.max;
  }

  private slot(): Slot {
    let state: "running" | "stalled" | "released" = "running";
    const timer = setTimeout(() => {
      if (state !== "running") return;
      state = "stalled";
      this.active--;
      this.stalled++;
      this.drain();
    }, this.stallMs);
    timer.unref?.();
    return {
      epoch: this.epoch,
      startedAt: this.now(),
      release: () => {
        if (state === "released") return;
        clearTimeout(timer);
        if (state === "stalled") this.stalled--;
        else this.active--;
        state = "released";
        this.drain();
      },
    };
  }

  private drain(): void {
    while (this.hasRoom() && this.waiting.length) {
      const next = this.waiting.shift()!;
      if (next.signal && next.onAbort) next.signal.removeEventListener("abort", next.onAbort);
      this.active++;
      next.resolve(this.slot());
    }
  }
}

// One limiter per model for the whole process, whichever route bundle loads this module.
const limiters = processSingleton("judge.limiters", () => new Map<string, AdaptiveLimiter>());

/** The process-wide limiter of a model. */
export function limiterFor(model: string, max: number): AdaptiveLimiter {
  let l = limiters.get(model);
  if (!l || l.max !== max) {
    l = new AdaptiveLimiter(max);
    limiters.set(model, l);
  }
  return l;
}

/** The limiter of a model if one exists yet (for reporting only). */
export function existingLimiter(model: string): AdaptiveLimiter | undefined {
  return limiters.get(model);
}
