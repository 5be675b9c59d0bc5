/**
 * Adaptive concurrency per model, shared by every running execution: at most `max` calls in flight,
 * halved on a rate limit, grown back by one after a run of successes.
 */
import { processSingleton } from "@/lib/process-state";

export class AdaptiveLimiter {
  private limit: number;
  private active = 0;
  private successes = 0;
  private readonly waiting: Array<{ resolve: () => void; reject: (e: unknown) => void; signal?: AbortSignal; onAbort?: () => void }> = [];

  constructor(
    readonly max: number,
    private readonly growAfter = 10,
  ) {
    this.limit = max;
  }

  get currentLimit(): number {
    return this.limit;
  }

  get inFlight(): number {
    return this.active;
  }

  /** Wait for a slot; rejects with the signal's reason if aborted while waiting. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const entry: (typeof this.waiting)[number] = {
        resolve: () => resolve(this.releaser()),
        reject,
        signal,
      };
      if (signal) {
        entry.onAbort = () => {
          const i = this.waiting.indexOf(entry);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener("abort", entry.onAbort, { once: true });
      }
      this.waiting.push(entry);
    });
  }

  /** A 429: halve the limit (never below 1). */
  onRateLimit(): void {
    this.limit = Math.max(1, Math.floor(this.limit / 2));
    this.successes = 0;
  }

  onSuccess(): void {
    if (this.limit >= this.max) return;
    if (++this.successes >= this.growAfter) {
      this.limit++;
      this.successes = 0;
      this.drain();
    }
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.drain();
    };
  }

  private drain(): void {
    while (this.active < this.limit && this.waiting.length) {
      const next = this.waiting.shift()!;
      if (next.signal && next.onAbort) next.signal.removeEventListener("abort", next.onAbort);
      this.active++;
      next.resolve();
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
