/**
 * The learnt time limit and the hedged request (lib/judge/tail.ts), on a clock driven by hand and a fake
 * provider whose every request is answered (or not) by the test.
 */
import { describe, expect, it } from "vitest";
import { JudgeTimeoutError } from "./call";
import { HEDGE_FLOOR_MS, HedgedCallError, HedgeLostError, hedgedCall, LatencyTracker, MIN_SAMPLES, SAMPLES, type Clock, type Role, type TailSettings } from "./tail";

class ManualClock implements Clock {
  t = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private id = 0;
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = ++this.id;
    this.timers.set(id, { at: this.t + ms, fn });
    return id;
  };
  clearTimeout = (h: unknown) => void this.timers.delete(h as number);
  /** Move time forward by `ms`, running each timer due on the way (and the promise work it starts). */
  async advance(ms: number) {
    const end = this.t + ms;
    for (;;) {
      await flush();
      const due = [...this.timers.entries()].filter(([, x]) => x.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
    }
    this.t = end;
    await flush();
  }
}

const flush = () => new Promise<void>((r) => setImmediate(r));

/** A provider request the test answers: `answer`, `fail`, or leave hanging; records its abort. */
type FakeRequest = { role: Role; signal: AbortSignal; answer: (v: string) => void; fail: (e: unknown) => void; abortedWith?: unknown };

function fakeProvider() {
  const requests: FakeRequest[] = [];
  const send = (role: Role, signal: AbortSignal, sent: () => void) =>
    new Promise<string>((resolve, reject) => {
      const r: FakeRequest = { role, signal, answer: resolve, fail: reject };
      signal.addEventListener("abort", () => {
        r.abortedWith = signal.reason;
        reject(signal.reason);
      });
      requests.push(r);
      sent();
    });
  return { requests, send };
}

const settings: TailSettings = { timeoutMs: 30_000, timeoutFloorMs: 200, timeoutP99Multiple: 3, hedge: true };

/** A tracker that has seen `n` answers: latencies 91..110 ms, repeated (p95 = 109, p99 = 110). */
function learnt(n = MIN_SAMPLES, budget = 10) {
  const t = new LatencyTracker();
  for (let i = 0; i < n; i++) t.recordAnswer(91 + (i % 20));
  for (let i = 0; i < budget * 5; i++) t.earn(); // a healthy past: hedges saved up
  return t;
}

describe("the time limit learnt from the provider's latency", () => {
  it("is the ceiling until enough calls answered, then multiple × p99 within [floor, ceiling]", () => {
    const t = learnt(MIN_SAMPLES - 1);
    expect(t.timeoutMs(settings)).toBe(30_000);
    t.recordAnswer(110);
    expect(t.quantile(0.99)).toBe(110);
    expect(t.timeoutMs(settings)).toBe(330);
    expect(t.timeoutMs({ ...settings, timeoutFloorMs: 1000 })).toBe(1000);
    expect(t.timeoutMs({ ...settings, timeoutMs: 250 })).toBe(250);
    for (let i = 0; i < 200; i++) t.recordAnswer(5_000);
    expect(t.timeoutMs(settings)).toBe(15_000);
  });

  it("aborts a call with no answer at the learnt limit, not after the 30 s ceiling", async () => {
    const clock = new ManualClock();
    const provider = fakeProvider();
    const call = hedgedCall(provider.send, { tracker: learnt(), settings: { ...settings, hedge: false }, clock });
    const failed = call.catch((e: unknown) => e);
    await clock.advance(329);
    expect(provider.requests[0].abortedWith).toBeUndefined();
    await clock.advance(1);
    expect(provider.requests[0].abortedWith).toBeInstanceOf(JudgeTimeoutError);
    const error = await failed;
    expect(error).toBeInstanceOf(HedgedCallError);
    expect((error as HedgedCallError).timeoutMs).toBe(330);
    expect((error as HedgedCallError).error).toBeInstanceOf(JudgeTimeoutError);
  });

  it("holds a call sent before the first answers to the limit learnt while it is out", async () => {
    const clock = new ManualClock();
    const provider = fakeProvider();
    const tracker = learnt(MIN_SAMPLES - 1);
    const failed = hedgedCall(provider.send, { tracker, settings: { ...settings, hedge: false }, clock }).catch((e: unknown) => e);
    await clock.advance(100);
    tracker.recordAnswer(100); // the 20th answer, of another call
    await clock.advance(400);
    expect(await failed).toBeInstanceOf(HedgedCallError);
    expect(clock.t).toBe(500); // ~330 ms after send, checked within 250 ms: long before 30 s
  });

  it("goes back to the ceiling when most calls time out (the provider got slow, not a few calls hung)", () => {
    const t = learnt(200);
    for (let i = 0; i < 19; i++) t.recordAnswer(100);
    t.recordTimeout(); // one hung call among answers: still learnt
    expect(t.timeoutMs(settings)).toBe(330);
    for (let i = 0; i < 20; i++) t.recordTimeout();
    expect(t.timeoutMs(settings)).toBe(30_000);
  });
});

describe("the hedged request", () => {
  it("fires once the call passes the observed p95; the first answer wins, the loser is aborted, one value", async () => {
    const clock = new ManualClock();
    const provider = fakeProvider();
    const tracker = learnt();
    const call = hedgedCall(provider.send, { tracker, settings, clock });
    await clock.advance(108);
    expect(provider.requests.map((r) => r.role)).toEqual(["primary"]);
    await clock.advance(1); // p95 = 109 ms
    expect(provider.requests.map((r) => r.role)).toEqual(["primary", "hedge"]);
    expect(tracker.hedgesSent).toBe(1);
    await clock.advance(50);
    provider.requests[1].answer("from the hedge");
    const won = await call;
    expect(won).toMatchObject({ value: "from the hedge", winner: "hedge", hedged: true, abandoned: 1 });
    expect(provider.requests[0].abortedWith).toBeInstanceOf(HedgeLostError);
    expect(provider.requests[1].abortedWith).toBeUndefined();
    // The primary answering after all is too late: nothing else comes of it.
    provider.requests[0].answer("late");
    await clock.advance(1000);
    expect(provider.requests).toHaveLength(2);
  });

  it("waits for the hedge floor when the p95 is shorter: a fast provider's calls are not sent twice for a few ms", async () => {
    const clock = new ManualClock();
    const provider = fakeProvider();
    const tracker = learnt();
    const call = hedgedCall(provider.send, { tracker, settings: { ...settings, hedgeFloorMs: HEDGE_FLOOR_MS }, clock });
    await clock.advance(HEDGE_FLOOR_MS - 1); // well past p95 = 109 ms
    expect(provider.requests.map((r) => r.role)).toEqual(["primary"]);
    await clock.advance(1);
    expect(provider.requests.map((r) => r.role)).toEqual(["primary", "hedge"]);
    provider.requests[0].answer("primary after all");
    expect(await call).toMatchObject({ value: "primary after all", winner: "primary", hedged: true, abandoned: 1 });
    expect(HEDGE_FLOOR_MS).toBeGreaterThan(109);
  });

  it("sends no hedge for a call that answers before p95, nor once the budget is spent, nor before p95 is known", async () => {
    const clock = new ManualClock();
    const provider = fakeProvider();
    const fast = hedgedCall(provider.send, { tracker: learnt(), settings, clock });
    await clock.advance(100);
    provider.requests[0].answer("in time");
    expect((await fast).hedged).toBe(false);
    await clock.advance(1000);
    expect(provider.requests).toHaveLength(1);

    const broke = learnt(MIN_SAMPLES, 0);
    const slow = hedgedCall(provider.send, { tracker: broke, settings, clock });
    await clock.advance(200);
    provider.requests[1].answer("slow");
    expect((await slow).hedged).toBe(false);
    expect(provider.requests).toHaveLength(2);

    const unknown = hedgedCall(provider.send, { tracker: learnt(MIN_SAMPLES - 1), settings, clock });
    await clock.advance(1000);
    provider.requests[2].answer("unknown p95");
    expect((await unknown).hedged).toBe(false);
  });

  it("lets the other request answer when one fails, and fails with the provider's answer when both do", async () => {
    const clock = new ManualClock();
    const provider = fakeProvider();
    const call = hedgedCall(provider.send, { tracker: learnt(), settings, clock });
    await clock.advance(109);
    provider.requests[1].fail(Object.assign(new Error("429"), { status: 429 }));
    await clock.advance(20);
    provider.requests[0].answer("the primary after all");
    expect(await call).toMatchObject({ value: "the primary after all", winner: "primary", hedged: true });

    const both = hedgedCall(provider.send, { tracker: learnt(), settings, clock }).catch((e: unknown) => e);
    await clock.advance(109);
    provider.requests[3].fail(new Error("500 from the hedge"));
    await clock.advance(300); // the primary hits its limit (330 ms)
    const error = (await both) as HedgedCallError;
    expect(error).toBeInstanceOf(HedgedCallError);
    expect((error.error as Error).message).toBe("500 from the hedge");
  });

  it("aborts both requests with the caller's reason on cancel", async () => {
    const clock = new ManualClock();
    const provider = fakeProvider();
    const controller = new AbortController();
    const call = hedgedCall(provider.send, { tracker: learnt(), settings, clock, signal: controller.signal }).catch((e: unknown) => e);
    await clock.advance(120);
    controller.abort(new Error("cancelled"));
    expect(((await call) as Error).message).toBe("cancelled");
    expect(provider.requests.map((r) => (r.abortedWith as Error).message)).toEqual(["cancelled", "cancelled"]);
  });
});

describe("LatencyTracker's quantiles", () => {
  it("match a sort of the last SAMPLES answers as old ones leave the window", () => {
    const t = new LatencyTracker();
    const seen: number[] = [];
    let x = 7;
    for (let i = 0; i < 3 * SAMPLES + 17; i++) {
      x = (x * 48271) % 2147483647; // a fixed pseudo-random sequence, repeats included
      const ms = x % 300;
      t.recordAnswer(ms);
      seen.push(ms);
      if (i % 37 !== 0 || seen.length < MIN_SAMPLES) continue;
      const window = seen.slice(-SAMPLES).sort((a, b) => a - b);
      for (const q of [0.5, 0.95, 0.99]) expect(t.quantile(q), `q ${q} after ${i + 1}`).toBe(window[Math.min(window.length - 1, Math.max(0, Math.ceil(q * window.length) - 1))]);
    }
  });
});
