/**
 * The process-wide limiter's AIMD under 429s, on a clock driven by hand (vitest's fake timers): an
 * isolated 429 or a steady minority of refusals leaves the limit alone; a burst halves it once (and
 * waits out the burst's Retry-After); successes grow it back.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AdaptiveLimiter, BURST, type Slot } from "./limiter";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** One answered call through the limiter: a success, or a 429 with the slot's epoch. */
async function answer(limiter: AdaptiveLimiter, refused: boolean, retryAfterMs?: number) {
  const slot = await limiter.acquire();
  if (refused) limiter.onRateLimit(slot.epoch, retryAfterMs);
  else limiter.onSuccess(slot);
  slot.release();
}

describe("AIMD on bursts of 429s", () => {
  it("ignores an isolated 429: one refusal among successes, or a few spread wider than the burst window", async () => {
    const limiter = new AdaptiveLimiter(32);
    for (let i = 0; i < 10; i++) await answer(limiter, false);
    await answer(limiter, true, 1000);
    expect(limiter.currentLimit).toBe(32);
    expect(limiter.stats()).toMatchObject({ rate_limits: 1, cuts: 0 });
    // Refusals alone, but each further apart than the window: no burst either.
    for (let i = 0; i < 5; i++) {
      vi.advanceTimersByTime(BURST.windowMs + 1);
      await answer(limiter, true);
    }
    expect(limiter.currentLimit).toBe(32);
    expect(limiter.pausedUntilMs).toBe(0);
  });

  it("keeps the limit under a steady fifth of refusals (the old per-answer AIMD settled near 8)", async () => {
    const limiter = new AdaptiveLimiter(32);
    // 5,000 answers, 320 a second, every fifth refused — random 429s that say nothing about our load.
    for (let i = 0; i < 5000; i++) {
      if (i % 32 === 0) vi.advanceTimersByTime(100);
      await answer(limiter, i % 5 === 4, 1000);
    }
    expect(limiter.stats()).toMatchObject({ limit: 32, cuts: 0, rate_limits: 1000 });
  });

  it("takes a few refusals among a run's first answers for what they are when many calls are out", async () => {
    const limiter = new AdaptiveLimiter(128);
    // A run sends 32 calls at once; the first three answers happen to be the 429s (a fifth of 32 at random).
    const slots: Slot[] = await Promise.all(Array.from({ length: 32 }, () => limiter.acquire()));
    slots.forEach((s, i) => {
      if (i < 6) limiter.onRateLimit(s.epoch, 1000);
      else limiter.onSuccess(s);
      s.release();
    });
    expect(limiter.stats()).toMatchObject({ limit: 128, cuts: 0, rate_limits: 6 });
    expect(limiter.pausedUntilMs).toBe(0);
  });

  it("halves once on a burst, not again for calls sent before the cut, and waits out the Retry-After", async () => {
    const limiter = new AdaptiveLimiter(32);
    // 8 calls out at once, all refused: one burst.
    const slots: Slot[] = await Promise.all(Array.from({ length: 8 }, () => limiter.acquire()));
    for (const s of slots) {
      limiter.onRateLimit(s.epoch, 2000);
      s.release();
    }
    expect(limiter.currentLimit).toBe(16);
    expect(limiter.stats()).toMatchObject({ rate_limits: 8, cuts: 1 });
    // The provider said 2 s: no new call before then.
    expect(limiter.pausedUntilMs).toBe(Date.now() + 2000);
    let sent = false;
    const next = limiter.acquire().then((s) => ((sent = true), s));
    await vi.advanceTimersByTimeAsync(1999);
    expect(sent).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toBe(true);
    (await next).release();
    // A new burst, of calls sent after the cut, halves again.
    const again: Slot[] = await Promise.all(Array.from({ length: 4 }, () => limiter.acquire()));
    for (const s of again) limiter.onRateLimit(s.epoch);
    again.forEach((s) => s.release());
    expect(limiter.currentLimit).toBe(8);
  });

  it("grows back by one per window of successes, up to the ceiling", async () => {
    const limiter = new AdaptiveLimiter(8);
    for (let i = 0; i < 3; i++) await answer(limiter, true);
    expect(limiter.currentLimit).toBe(4);
    for (let i = 0; i < 3; i++) await answer(limiter, false);
    expect(limiter.currentLimit).toBe(4);
    await answer(limiter, false);
    expect(limiter.currentLimit).toBe(5);
    for (let i = 0; i < 5 + 6 + 7; i++) await answer(limiter, false);
    expect(limiter.currentLimit).toBe(8);
    for (let i = 0; i < 100; i++) await answer(limiter, false);
    expect(limiter.currentLimit).toBe(8);
  });
});
