import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { clearJudgeCache } from "@/db/repositories/judge";
import { resetConfig } from "@/lib/config";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { costOf, resolveModelName } from "./config";
import { judgeThreadCalls, warmJudgeThread } from "./call-thread";
import { judge, type JudgeDeps } from "./judge";
import { AdaptiveLimiter, limiterFor, type Slot } from "./limiter";

let double: JudgeDouble;
const sleeps: number[] = [];
// Backoff delays are recorded, not waited for, so retry tests are fast and exact.
const deps: JudgeDeps = {
  retry: { random: () => 0.5, sleep: async (ms) => void sleeps.push(ms) },
};

function configure(env: Record<string, string | undefined>) {
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetConfig();
}

beforeAll(async () => {
  // A provider that bills a request it had begun even once the client left (a hedge's loser).
  double = await startJudgeDouble({ billAbandoned: true });
});
afterAll(async () => {
  await double.close();
});
beforeEach(async () => {
  double.reset();
  sleeps.length = 0;
  await clearJudgeCache();
  configure({
    OPENAI_BASE_URL: double.baseURL,
    OPENAI_API_KEY: "sk-test-secret",
    JUDGE_MAX_RETRIES: "3",
    JUDGE_TIMEOUT_MS: "5000",
    JUDGE_PRICES: undefined,
    JUDGE_MODEL: undefined,
    JUDGE_THREAD: undefined,
    JUDGE_HEDGE: undefined,
    JUDGE_TIMEOUT_FLOOR_MS: undefined,
    JUDGE_MAX_RATE_LIMIT_RETRIES: undefined,
  });
});
afterEach(() => configure({ OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined }));

const progress = (prompt = `Rate this ${Math.random()}`) =>
  ({ model: "gpt-4o-mini", system: "You are a judge.", prompt, outputType: "progress" }) as const;

describe("configuration", () => {
  it("fails the cell with one clear error when no provider is configured", async () => {
    configure({ OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined });
    const out = await judge(progress());
    expect(out).toMatchObject({
      status: "failed",
      error: "no judge model configured: set OPENAI_API_KEY or OPENAI_BASE_URL",
      result: null,
      score: null,
    });
    expect(double.count()).toBe(0);
  });

  it("picks the run's model, then the metric's, then JUDGE_MODEL; router-style names pass through", async () => {
    configure({ JUDGE_MODEL: "judge-default" });
    expect(resolveModelName(null, undefined)).toBe("judge-default");
    expect(resolveModelName(null, "metric-model")).toBe("metric-model");
    expect(resolveModelName("openai/gpt-4o-mini", "metric-model")).toBe("openai/gpt-4o-mini");
    await judge({ ...progress(), model: "openai/gpt-4o-mini" });
    expect((double.requests.at(-1)?.body as { model: string }).model).toBe("openai/gpt-4o-mini");
    expect(double.requests.at(-1)?.path).toBe("/v1/chat/completions");
  });

  it("makes the provider's calls on the judge thread by default, and in process with JUDGE_THREAD=false", async () => {
    const before = judgeThreadCalls();
    expect((await judge(progress())).status).toBe("completed");
    expect(judgeThreadCalls()).toBe(before + 1);
    configure({ JUDGE_THREAD: "false" });
    expect((await judge(progress())).status).toBe("completed");
    expect(judgeThreadCalls()).toBe(before + 1);
    expect(double.count()).toBe(2);
    configure({ JUDGE_THREAD: "no" });
    await expect(judge(progress())).rejects.toThrow(/JUDGE_THREAD: must be true or false/);
    configure({ JUDGE_THREAD: undefined });
  });

  it("prices tokens from JUDGE_PRICES", () => {
    configure({ JUDGE_PRICES: '{"gpt-4o-mini": {"input": 0.15, "output": 0.6}}' });
    expect(costOf("gpt-4o-mini", 1_000_000, 500_000)).toBeCloseTo(0.45);
    expect(costOf("unknown", 10, 10)).toBeNull();
  });
});

describe("verdicts by output type", () => {
  it("asks for structured output and returns a progress verdict with usage", async () => {
    const out = await judge(progress());
    expect(out.status).toBe("completed");
    expect(out.result).toEqual({ score: 0.8, reasoning: expect.any(String) });
    expect(out.score).toBe(0.8);
    expect(out.inputTokens).toBeGreaterThan(0);
    expect(out.outputTokens).toBeGreaterThan(0);
    expect(out.cached).toBe(false);
    const body = double.requests.at(-1)?.body as { response_format: { type: string; json_schema: { schema: unknown } }; temperature: number };
    expect(body.response_format.type).toBe("json_schema");
    expect(body.response_format.json_schema.schema).toMatchObject({ required: ["score", "reasoning"] });
    expect(body.temperature).toBe(0);
  });

  it("clamps progress scores to [0, 1]", async () => {
    double.enqueue({ kind: "verdict", body: { score: 1.7, reasoning: "great" } });
    expect((await judge(progress())).result).toEqual({ score: 1, reasoning: "great" });
    double.enqueue({ kind: "verdict", body: { score: -3, reasoning: "bad" } });
    expect((await judge(progress())).score).toBe(0);
  });

  it("returns checkbox, number and text verdicts", async () => {
    double.enqueue({ kind: "verdict", body: { value: false, reasoning: "no" } });
    const box = await judge({ ...progress(), outputType: "checkbox" });
    expect(box).toMatchObject({ status: "completed", result: { value: false, reasoning: "no" }, score: 0 });
    double.enqueue({ kind: "verdict", body: { value: 7.5, reasoning: "ok" } });
    expect(await judge({ ...progress(), outputType: "number" })).toMatchObject({ result: { value: 7.5 }, score: 7.5 });
    double.enqueue({ kind: "verdict", body: { value: "a summary" } });
    expect(await judge({ ...progress(), outputType: "text" })).toMatchObject({ result: { value: "a summary" }, score: null });
  });

  it("validates json verdicts against the metric's output_schema and takes its score", async () => {
    const outputSchema = {
      type: "object",
      properties: { score: { type: "number" }, reasks: { type: "array", items: { type: "integer" } } },
      required: ["score", "reasks"],
    };
    double.enqueue({ kind: "verdict", body: { score: 0.25, reasks: [2, 4] } });
    const ok = await judge({ ...progress(), outputType: "json", outputSchema });
    expect(ok).toMatchObject({ status: "completed", result: { score: 0.25, reasks: [2, 4] }, score: 0.25 });

    double.enqueue({ kind: "verdict", body: { score: "high" } }, { kind: "verdict", body: { reasks: "none" } });
    const bad = await judge({ ...progress(), outputType: "json", outputSchema });
    expect(bad.status).toBe("failed");
    expect(bad.error).toMatch(/does not match the output schema/);
    expect(bad.rawOutput).toContain("reasks");
    expect(double.count()).toBe(3); // one call, one repair, for the bad verdict
  });

  it("extracts JSON from fenced or chatty replies of providers that ignore structured output", async () => {
    double.enqueue({ kind: "text", content: 'Sure! Here is my verdict:\n```json\n{"score": 0.4, "reasoning": "meh"}\n```' });
    expect(await judge(progress())).toMatchObject({ status: "completed", score: 0.4 });
    double.enqueue({ kind: "text", content: 'My verdict is {"score": 0.9, "reasoning": "a {nested} brace"} overall.' });
    expect(await judge(progress())).toMatchObject({ status: "completed", score: 0.9 });
    expect(double.count()).toBe(2);
  });

  it("repairs once, then fails keeping the raw reply", async () => {
    double.enqueue({ kind: "malformed" }, { kind: "verdict", body: { score: 0.6, reasoning: "fixed" } });
    const repaired = await judge(progress());
    expect(repaired).toMatchObject({ status: "completed", score: 0.6 });
    const repairBody = double.requests.at(-1)?.body as { messages: Array<{ role: string; content: string }> };
    expect(repairBody.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);

    double.enqueue({ kind: "malformed" }, { kind: "malformed" });
    const failed = await judge(progress());
    expect(failed.status).toBe("failed");
    expect(failed.error).toBe("invalid judge output: the judge's reply is not valid JSON");
    expect(failed.rawOutput).toMatch(/^\{"score"/);
  });
});

describe("failures", () => {
  it("retries a 429 honouring Retry-After, then succeeds", async () => {
    double.enqueue({ kind: "rate_limit", retryAfterSeconds: 2 });
    const out = await judge(progress(), deps);
    expect(out).toMatchObject({ status: "completed", attempts: 2 });
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(2000);
    expect(sleeps[0]).toBeLessThan(2300);
  });

  it("counts 429s apart from faults: a cell refused five times in a row still gets its verdict", async () => {
    // JUDGE_MAX_RETRIES is 3 here; 429s have their own budget (8 by default), and a 500 still has its 3.
    double.enqueue(...Array.from({ length: 5 }, () => ({ kind: "rate_limit" as const, retryAfterSeconds: 1 })), { kind: "server_error" });
    const out = await judge(progress(), deps);
    expect(out).toMatchObject({ status: "completed", attempts: 7 });
    expect(sleeps.slice(0, 5).every((ms) => ms >= 1000 && ms < 1300)).toBe(true);
    expect(sleeps[5]).toBe(250); // the fault's first backoff, not its sixth

    configure({ JUDGE_MAX_RATE_LIMIT_RETRIES: "2" });
    double.enqueue(...Array.from({ length: 3 }, () => ({ kind: "rate_limit" as const, retryAfterSeconds: 0 })));
    const refused = await judge(progress(), deps);
    expect(refused).toMatchObject({ status: "failed", error: "judge rate limited (429) after 3 attempts" });

    // JUDGE_MAX_RETRIES=0 retries nothing, 429s included, unless JUDGE_MAX_RATE_LIMIT_RETRIES says otherwise.
    configure({ JUDGE_MAX_RATE_LIMIT_RETRIES: undefined, JUDGE_MAX_RETRIES: "0" });
    double.reset();
    double.enqueue({ kind: "rate_limit", retryAfterSeconds: 0 });
    expect(await judge(progress(), deps)).toMatchObject({ status: "failed", error: "judge rate limited (429)" });
    expect(double.count()).toBe(1);
  });

  it("retries 5xx with exponential backoff and gives up after JUDGE_MAX_RETRIES", async () => {
    double.enqueue({ kind: "server_error" }, { kind: "server_error", status: 503 }, { kind: "server_error" }, { kind: "server_error" });
    const out = await judge(progress(), deps);
    expect(out.status).toBe("failed");
    expect(out.error).toMatch(/^judge server error \(500\) after 4 attempts/);
    expect(double.count()).toBe(4);
    expect(sleeps).toEqual([250, 500, 1000]); // random() = 0.5 of 500·2^n
  });

  it("does not retry other 4xx", async () => {
    double.enqueue({ kind: "http_error", status: 400, message: "bad model" });
    const out = await judge(progress());
    expect(out.status).toBe("failed");
    expect(out.error).toMatch(/judge rejected the request \(400\)/);
    expect(double.count()).toBe(1);
  });

  it("times out a hanging call and retries it", async () => {
    // Hedges off: a hedge past the observed p95 would take the second queued hang (hedges: their own tests).
    configure({ JUDGE_TIMEOUT_MS: "300", JUDGE_MAX_RETRIES: "1", JUDGE_HEDGE: "false" });
    double.enqueue({ kind: "hang" });
    const out = await judge(progress());
    expect(out).toMatchObject({ status: "completed", attempts: 2 });
    double.enqueue({ kind: "hang" }, { kind: "hang" });
    const failed = await judge(progress());
    expect(failed.error).toBe("judge call timed out after 300 ms after 2 attempts: no reply from the provider (JUDGE_TIMEOUT_MS sets the limit)");
  });

  it("aborts the call in flight when the caller cancels, and throws", async () => {
    // Hedges off: past the p95 learnt from this file's earlier calls a hedge would be a second request.
    configure({ JUDGE_HEDGE: "false" });
    double.enqueue({ kind: "hang" });
    const controller = new AbortController();
    const pending = judge({ ...progress(), signal: controller.signal });
    await expect.poll(() => double.count(), { timeout: 5000 }).toBe(1);
    controller.abort(new Error("cancelled by user"));
    await expect(pending).rejects.toThrow("cancelled by user");
    await expect.poll(() => double.inFlight()).toBe(0);
    expect(double.count()).toBe(1);
  });

  it("never caches errors", async () => {
    const req = progress("same prompt for error caching");
    double.enqueue({ kind: "http_error", status: 400 });
    expect((await judge(req)).status).toBe("failed");
    expect((await judge(req)).status).toBe("completed");
    expect(double.count()).toBe(2);
  });
});

describe("cache", () => {
  it("answers an unchanged cell from the cache at no cost, unless asked not to", async () => {
    const req = progress("cache me");
    const first = await judge(req);
    const second = await judge(req);
    expect(second).toMatchObject({ status: "completed", cached: true, result: first.result, inputTokens: 0, outputTokens: 0 });
    expect(double.count()).toBe(1);
    expect((await judge({ ...req, noCache: true })).cached).toBe(false);
    expect(double.count()).toBe(2);
    // Anything that decides the answer changes the key.
    await judge({ ...req, model: "other-model" });
    await judge({ ...req, system: "Another system prompt" });
    await judge({ ...req, outputType: "checkbox" });
    expect(double.count()).toBe(5);
  });
});

describe("adaptive limiter", () => {
  it("lets calls behind a hung one go once it has stalled, and never exceeds the ceiling", async () => {
    const limiter = new AdaptiveLimiter(2, { minStallMs: 30 });
    for (let i = 0; i < 4; i++) limiter.onRateLimit(); // a burst: limit 2 → 1
    expect(limiter.currentLimit).toBe(1);
    const hung = await limiter.acquire(); // never answered
    let next: Slot | undefined;
    const nextSlot = limiter.acquire();
    void nextSlot.then((s) => (next = s));
    await new Promise((r) => setTimeout(r, 5));
    expect(next).toBeUndefined();
    // Given once the hung call has stalled (30 ms). Read at once: a poll every 50 ms let the second
    // call stall too (30 ms after it got its slot) before the stats were read.
    next = await nextSlot;
    expect(limiter.stats()).toMatchObject({ in_flight: 1, stalled: 1 });
    // Two in flight (one stalled) is the ceiling of 2: a third waits even when the second stalls.
    let third: Slot | undefined;
    void limiter.acquire().then((s) => (third = s));
    await new Promise((r) => setTimeout(r, 80));
    expect(limiter.stats().stalled).toBe(2);
    expect(third).toBeUndefined();
    hung.release();
    await expect.poll(() => third !== undefined).toBe(true);
    next!.release();
    third!.release();
    expect(limiter.stats()).toMatchObject({ in_flight: 0, stalled: 0 });
  });

  it("lets a retry that waited its Retry-After in ahead of calls not yet tried", async () => {
    const limiter = limiterFor("limiter-priority", 1);
    const holder = await limiter.acquire();
    const order: string[] = [];
    const fresh = limiter.acquire().then((s) => (order.push("fresh"), s));
    const retry = limiter.acquire(undefined, { priority: true }).then((s) => (order.push("retry"), s));
    holder.release();
    (await retry).release();
    (await fresh).release();
    expect(order).toEqual(["retry", "fresh"]);
  });

  it("keeps at most the limit in flight and lets waiters in as slots free", async () => {
    const limiter = limiterFor("limiter-slots", 2);
    const a = await limiter.acquire();
    await limiter.acquire();
    let thirdIn = false;
    const third = limiter.acquire().then((r) => {
      thirdIn = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(thirdIn).toBe(false);
    expect(limiter.inFlight).toBe(2);
    a.release();
    (await third).release();
    expect(thirdIn).toBe(true);
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    const blocked = limiter.acquire(controller.signal);
    controller.abort(new Error("stop"));
    await expect(blocked).rejects.toThrow("stop");
    (await waiting).release();
  });

  it("sends fewer calls at once after a burst of 429s, and as many as before after an isolated one", async () => {
    configure({ JUDGE_MAX_CONCURRENCY: "4" });
    double.setLatency(60);
    // The most calls open at once, as the double counted them on arrival (a 3 ms sample missed peaks on a busy machine).
    const peakOf = async (n: number, tag: string) => {
      double.resetPeak();
      await Promise.all(Array.from({ length: n }, async (_, i) => await judge({ ...progress(`${tag} ${i}`), model: "after-429" }, deps)));
      return double.stats().peakInFlight;
    };
    expect(await peakOf(8, "before")).toBe(4);
    // One 429 among successes: the provider refused one call, it is not over its limit.
    double.enqueue({ kind: "rate_limit", retryAfterSeconds: 0 });
    await judge({ ...progress("isolated"), model: "after-429" }, deps);
    expect(await peakOf(8, "after isolated")).toBe(4);
    // Four calls at once, all refused: a burst halves the limit to 2, grown back by one per window of successes.
    await new Promise((r) => setTimeout(r, 1100)); // the successes above leave the burst window
    double.enqueue(...Array.from({ length: 4 }, () => ({ kind: "rate_limit" as const, retryAfterSeconds: 0 })));
    const limiter = limiterFor("after-429", 4);
    expect(limiter.stats()).toMatchObject({ limit: 4, cuts: 0 });
    await Promise.all(Array.from({ length: 4 }, (_, i) => judge({ ...progress(`burst ${i}`), model: "after-429" }, deps)));
    // Cut once to 2; the 4 retries' successes grew it back to 3 so far.
    expect(limiter.stats()).toMatchObject({ limit: 3, cuts: 1 });
    expect(await peakOf(2, "after burst")).toBeLessThan(4);
    configure({ JUDGE_MAX_CONCURRENCY: undefined });
  });

  it("limits calls in flight across concurrent judge calls to JUDGE_MAX_CONCURRENCY", async () => {
    configure({ JUDGE_MAX_CONCURRENCY: "3" });
    double.setLatency(80);
    double.resetPeak();
    await Promise.all(Array.from({ length: 12 }, async (_, i) => await judge({ ...progress(`concurrent ${i}`), model: "concurrency-model" })));
    const peak = double.stats().peakInFlight;
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(3);
    configure({ JUDGE_MAX_CONCURRENCY: undefined });
  });
});

describe("a call slower than the provider's p95", () => {
  // The thread's start (its warm-up) must not be learnt as the provider's latency: a server starts it
  // before its first run.
  beforeAll(async () => {
    await warmJudgeThread();
  });

  it("is hedged: the second request's verdict is used, the slow first one aborted and counted as the provider bills it", async () => {
    const model = `hedge-${Math.random()}`;
    // Learn the provider's latency (a few ms): p95 and the learnt limit exist from here on. Without hedges
    // while learning: under load a learning call past the young p95 was hedged and spent the budget its
    // calls earned (5 hedges' worth), so prompt B got none (attempts 2, hedges 0 in a fresh-clone run).
    configure({ JUDGE_HEDGE: "false" });
    for (let i = 0; i < 25; i++) expect((await judge({ ...progress(`learn ${i}`), model }, deps)).status).toBe("completed");
    configure({ JUDGE_HEDGE: undefined });
    const plain = await judge({ ...progress("same length prompt A"), model }, deps);
    // Only prompt B's first request is slow (its hedge is the same request and answers at once): a late
    // request of an earlier call (a learning call's own hedge, still on its way under load) cannot take it.
    // Both replies are the same verdict, so the provider bills each the same.
    const verdict = { score: 0.5, reasoning: "same reply either way" };
    double.setDefault({ kind: "verdict", body: verdict });
    double.addRule({ match: "same length prompt B", behaviour: { kind: "verdict", body: verdict, latencyMs: 4000 }, times: 1 });
    const one = await judge({ ...progress("same length prompt C"), model }, deps);
    const before = double.count();
    const billedBefore = double.stats().billed;
    const out = await judge({ ...progress("same length prompt B"), model }, deps);
    expect(out).toMatchObject({ status: "completed", attempts: 1, hedges: 1 });
    expect(double.count() - before).toBe(2);
    // The loser was sent and billed once the hedge answered: counted at the winner's tokens, so the call's
    // tokens are what the provider billed for it (issue 33: they used to count the winner only).
    await expect.poll(() => double.stats().billed.replies - billedBefore.replies).toBe(2);
    const billed = double.stats().billed;
    expect(out.inputTokens).toBe(billed.prompt_tokens - billedBefore.prompt_tokens);
    expect(out.outputTokens).toBe(billed.completion_tokens - billedBefore.completion_tokens);
    expect(out.inputTokens).toBe(2 * one.inputTokens);
    expect(plain.status).toBe("completed");
    // The hung request was aborted when the hedge answered: nothing of this call is still out.
    await expect.poll(() => double.inFlight()).toBe(0);
    expect(out.latencyMs).toBeLessThan(1000); // not the 5 s time limit of the configuration
  });

  it("is not hedged with JUDGE_HEDGE=false: a hung call waits for its learnt time limit", async () => {
    configure({ JUDGE_HEDGE: "false", JUDGE_TIMEOUT_FLOOR_MS: "300", JUDGE_MAX_RETRIES: "0" });
    const model = `no-hedge-${Math.random()}`;
    for (let i = 0; i < 25; i++) await judge({ ...progress(`learn ${i}`), model }, deps);
    double.enqueue({ kind: "hang" });
    const out = await judge({ ...progress("hangs"), model }, deps);
    expect(out).toMatchObject({ status: "failed", hedges: 0 });
    // 3 × p99 of a few-ms double, at least the 300 ms floor: far below the configured 5 s ceiling.
    expect(out.error).toMatch(/a limit learnt from its latency/);
    const [, ms] = /^judge call timed out after (\d+) ms: no reply from the provider \(a limit learnt from its latency/.exec(out.error ?? "") ?? [];
    expect(Number(ms)).toBeGreaterThanOrEqual(300);
    expect(Number(ms)).toBeLessThan(5000);
    configure({ JUDGE_HEDGE: undefined, JUDGE_TIMEOUT_FLOOR_MS: undefined });
  });
});

describe("the caller's gate (a run's batch_size)", () => {
  it("is taken before each attempt's provider call and given back once the provider answered, before the verdict returns", async () => {
    const order: string[] = [];
    let held = 0;
    const gate = async () => {
      held++;
      order.push(`take (requests so far: ${double.count()})`);
      return () => {
        held--;
        order.push(`give back (requests so far: ${double.count()})`);
      };
    };
    double.enqueue({ kind: "rate_limit", retryAfterSeconds: 1 });
    const out = await judge({ ...progress(), gate }, deps);
    order.push("verdict");
    expect(out).toMatchObject({ status: "completed", attempts: 2 });
    // One slot per attempt: the 429's slot is given back before its Retry-After wait, not held through it.
    expect(order).toEqual(["take (requests so far: 0)", "give back (requests so far: 1)", "take (requests so far: 1)", "give back (requests so far: 2)", "verdict"]);
    expect(held).toBe(0);
  });

  it("refused: no provider call, a failed outcome, nothing cached", async () => {
    const req = { ...progress("refused by the gate"), gate: async () => Promise.reject(new Error("not started: the server is shutting down")) };
    const out = await judge(req, deps);
    expect(out).toMatchObject({ status: "failed", attempts: 0 });
    expect(double.count()).toBe(0);
    expect(sleeps).toEqual([]); // not retried
    expect((await judge(progress("refused by the gate"))).cached).toBe(false);
  });

  it("bounds calls in flight below the process-wide limit", async () => {
    double.setLatency(60);
    const slots = new AdaptiveLimiter(2);
    const gate = async (signal?: AbortSignal) => (await slots.acquire(signal)).release;
    double.resetPeak();
    const outs = await Promise.all(Array.from({ length: 8 }, (_, i) => judge({ ...progress(`gated ${i}`), gate })));
    const peak = double.stats().peakInFlight;
    expect(outs.every((o) => o.status === "completed")).toBe(true);
    expect(peak).toBe(2);
  });
});
