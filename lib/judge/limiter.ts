/**
 * Adaptive concurrency per model, shared by every running execution: TCP's AIMD in its per-answer form
 * (as DCTCP does it, in proportion to how many answers were refused). At most `limit` calls in flight;
 * every success grows the limit by one per window (one `limit` of successes), every 429 takes half a
 * slot away. A window of nothing but 429s therefore halves the limit, a clean window adds one, and a
 * provider that refuses a steady share r of calls whatever the load settles near 2(1 − r)/r instead of
 * collapsing to 1 — the 429 count says how much refusing there is.
 * A call with no answer after `stallMs` (4× the usual latency, at least 2 s) leaves the window: it goes
 * on until its own timeout, but a hung call no longer blocks the calls behind it. Calls in flight,
 * stalled ones included, never exceed `max`. A retry waiting out its Retry-After holds no slot, and
 * when it is due it goes to the front of the queue.
 */
import { processSingleton } from "@/lib/process-state";

/** A slot in flight: release it when the call ends. `epoch` counts the limit's cuts (for reports). */
export type Slot = { release: () => void; epoch: number; startedAt: number };

type Waiter = { resolve: (slot: Slot) => void; reject: (e: unknown) => void; signal?: AbortSignal; onAbort?: () => void };

export type LimiterStats = { limit: number; max: number; in_flight: number; stalled: number; waiting: number; rate_limits: number };

export type LimiterOptions = { minStallMs?: number };

export class AdaptiveLimiter {
  /** Fractional: 429s take half a slot each; the usable limit is its floor. */
  private limit: number;
  private active = 0;
  private stalled = 0;
  private successes = 0;
  private epoch = 0;
  private rateLimits = 0;
  /** Smoothed latency of answered calls, for the stall threshold. */
  private latencyMs = 0;
  private readonly minStallMs: number;
  private readonly waiting: Waiter[] = [];

  constructor(
    readonly max: number,
    opts: LimiterOptions = {},
  ) {
    this.limit = max;
    this.minStallMs = opts.minStallMs ?? 2000;
  }

  get currentLimit(): number {
    return Math.max(1, Math.floor(this.limit));
  }

  get inFlight(): number {
    return this.active;
  }

  /** Figures for progress events, execution meta and the settings page. */
  stats(): LimiterStats {
    return { limit: this.currentLimit, max: this.max, in_flight: this.active, stalled: this.stalled, waiting: this.waiting.length, rate_limits: this.rateLimits };
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

  /** A 429: half a slot less, never below 1. (`_epoch` is accepted for callers that track it.) */
  onRateLimit(_epoch?: number): void {
    this.rateLimits++;
    const before = this.currentLimit;
    this.limit = Math.max(1, this.limit - 0.5);
    if (this.currentLimit < before) this.epoch++;
  }

  /** A call answered (`slot` gives its latency): a full window of successes grows the limit by one. */
  onSuccess(slot?: Slot): void {
    if (slot) {
      const ms = Date.now() - slot.startedAt;
      this.latencyMs = this.latencyMs === 0 ? ms : 0.8 * this.latencyMs + 0.2 * ms;
    }
    if (this.limit >= this.max) return;
    if (++this.successes >= this.currentLimit) {
      this.limit = Math.min(this.max, Math.floor(this.limit) + 1);
      this.successes = 0;
      this.drain();
    }
  }

  private hasRoom(): boolean {
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
      startedAt: Date.now(),
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
