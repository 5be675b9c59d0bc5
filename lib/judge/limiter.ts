/**
 * Adaptive concurrency per model, shared by every running execution, as TCP's congestion control does
 * it (AIMD): at most `limit` calls in flight; a 429 halves the limit once per window (the 429s of calls
 * sent before the last cut are the same congestion signal and do not cut again); every `limit`
 * successes in a row of the current window grow it by one, up to `max`. A retry waiting out its
 * Retry-After holds no slot, and when it is due it goes to the front of the queue.
 */
import { processSingleton } from "@/lib/process-state";

/** A slot in flight: release it when the call ends; `epoch` is the window it was sent in. */
export type Slot = { release: () => void; epoch: number };

type Waiter = { resolve: (slot: Slot) => void; reject: (e: unknown) => void; signal?: AbortSignal; onAbort?: () => void };

export type LimiterStats = { limit: number; max: number; in_flight: number; waiting: number; rate_limits: number };

export class AdaptiveLimiter {
  private limit: number;
  private active = 0;
  private successes = 0;
  private epoch = 0;
  private rateLimits = 0;
  private readonly waiting: Waiter[] = [];

  constructor(readonly max: number) {
    this.limit = max;
  }

  get currentLimit(): number {
    return this.limit;
  }

  get inFlight(): number {
    return this.active;
  }

  /** Figures for progress events, execution meta and the settings page. */
  stats(): LimiterStats {
    return { limit: this.limit, max: this.max, in_flight: this.active, waiting: this.waiting.length, rate_limits: this.rateLimits };
  }

  /**
   * Wait for a slot; rejects with the signal's reason if aborted while waiting. `priority` (a retry
   * whose wait is over) goes ahead of calls that have not been tried yet.
   */
  acquire(signal?: AbortSignal, opts: { priority?: boolean } = {}): Promise<Slot> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.active < this.limit) {
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

  /** A 429 on a call sent in `epoch` (omitted: treat it as current): halve once per window, never below 1. */
  onRateLimit(epoch: number = this.epoch): void {
    this.rateLimits++;
    if (epoch !== this.epoch) return;
    this.limit = Math.max(1, Math.floor(this.limit / 2));
    this.successes = 0;
    this.epoch++;
  }

  /** A call answered: one more success in this window; a full window of them grows the limit by one. */
  onSuccess(): void {
    if (this.limit >= this.max) return;
    if (++this.successes >= this.limit) {
      this.limit++;
      this.successes = 0;
      this.drain();
    }
  }

  private slot(): Slot {
    let released = false;
    return {
      epoch: this.epoch,
      release: () => {
        if (released) return;
        released = true;
        this.active--;
        this.drain();
      },
    };
  }

  private drain(): void {
    while (this.active < this.limit && this.waiting.length) {
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
