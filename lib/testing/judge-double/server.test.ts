/**
 * Tests for the judge TEST DOUBLE, driven through real HTTP and the real
 * `@ai-sdk/openai` chat-completions client — the same path production code
 * uses — so a passing suite means the double is a faithful stand-in.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { APICallError, NoObjectGeneratedError, Output, RetryError, generateText, streamText } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { DEFAULT_PLAIN_TEXT, MALFORMED_CONTENT, drawFault, mulberry32, type FaultMix } from "./behaviours";
import { startJudgeDouble, type JudgeDouble } from "./server";

const verdictSchema = z.object({ score: z.number().min(0).max(1), reasoning: z.string() });

let double: JudgeDouble;
beforeEach(async () => {
  double = await startJudgeDouble({ port: 0 });
});
afterEach(async () => {
  await double.close();
});

function chatModel(d: JudgeDouble = double) {
  return createOpenAI({ baseURL: d.baseURL, apiKey: "test" }).chat("gpt-4o-mini");
}

function judge(prompt: string, opts: { maxRetries?: number; abortSignal?: AbortSignal } = {}) {
  return generateText({ model: chatModel(), prompt, output: Output.object({ schema: verdictSchema }), maxRetries: 0, ...opts });
}

function postChat(d: JudgeDouble, body: Record<string, unknown> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(`${d.baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-secret" },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }], ...body }),
    signal,
  });
}

function admin(path: string, body: unknown, method = "POST"): Promise<Response> {
  const init: RequestInit = method === "GET" ? {} : { method, body: typeof body === "string" ? body : JSON.stringify(body) };
  return fetch(`${double.url}/__double/${path}`, init);
}

async function eventually(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => expect.fail("expected the call to reject"),
    (err: unknown) => err,
  );
}

describe("judge test double", { timeout: 20_000 }, () => {
  it("synthesises a default verdict that validates against the structured-output schema", async () => {
    const result = await judge("Rate this conversation.");
    expect(verdictSchema.parse(result.output)).toEqual(result.output);
    expect(result.output.score).toBeGreaterThanOrEqual(0);
    expect(result.output.score).toBeLessThanOrEqual(1);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBe(Math.ceil(result.text.length / 4));

    const body = double.requests[0].body as { response_format: { type: string; json_schema: { schema: unknown } } };
    expect(body.response_format.type).toBe("json_schema");
    expect(body.response_format.json_schema.schema).toBeTypeOf("object");
    expect(double.requests[0]).toMatchObject({ behaviour: "default", source: "default", status: 200 });
  });

  it("synthesises valid values for a richer schema (enum, integer range, nested, nullable, bounds)", async () => {
    const rich = z.object({
      rating: z.number().int().min(1).max(5),
      label: z.enum(["pass", "fail"]),
      passed: z.boolean(),
      evidence: z.array(z.object({ turn: z.number().int().min(0), quote: z.string().max(10) })).min(1),
      note: z.string().nullable(),
      confidence: z.number().gt(0).lt(1),
      nested: z.object({ tags: z.array(z.string()), ok: z.literal(true) }),
    });
    const { output } = await generateText({ model: chatModel(), prompt: "x", output: Output.object({ schema: rich }), maxRetries: 0 });
    expect(rich.parse(output)).toEqual(output);
    expect(output.label).toBe("pass");
  });

  it("answers json_object with a generic verdict and no response_format with plain text", async () => {
    const res = await postChat(double, { response_format: { type: "json_object" } });
    const json = (await res.json()) as { object: string; choices: { message: { content: string } }[] };
    expect(json.object).toBe("chat.completion");
    expect(JSON.parse(json.choices[0].message.content)).toMatchObject({ score: 0.8 });

    const { text, usage } = await generateText({ model: chatModel(), prompt: "Say hi", maxRetries: 0 });
    expect(text).toBe(DEFAULT_PLAIN_TEXT);
    expect(usage.totalTokens).toBe((usage.inputTokens ?? 0) + (usage.outputTokens ?? 0));
  });

  it("streams text in several chunks that assemble correctly, with usage", async () => {
    const result = streamText({ model: chatModel(), prompt: "Stream please", maxRetries: 0 });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe(DEFAULT_PLAIN_TEXT);
    const usage = await result.usage;
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBe(Math.ceil(DEFAULT_PLAIN_TEXT.length / 4));
    expect(double.requests[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("returns an enqueued canned verdict once, then falls back to the default", async () => {
    double.enqueue({ kind: "verdict", body: { score: 0.25, reasoning: "canned" } });
    expect((await judge("first")).output).toEqual({ score: 0.25, reasoning: "canned" });
    expect((await judge("second")).output.score).toBe(0.8);
    expect(double.requests.map((r) => r.source)).toEqual(["queue", "default"]);
  });

  it("replies with a verdict embedded in the prompt marker", async () => {
    const prompt = 'Judge this. [[judge-double:verdict {"score": 0.1, "reasoning": "from [[marker]]"}]] Thanks.';
    expect((await judge(prompt)).output).toEqual({ score: 0.1, reasoning: "from [[marker]]" });
    expect(double.requests[0].source).toBe("marker");
  });

  it("rate-limits with Retry-After, and the AI SDK retries it", async () => {
    double.enqueue({ kind: "rate_limit", retryAfterSeconds: 7 });
    const res = await postChat(double);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
    expect(await res.json()).toMatchObject({ error: { type: "rate_limit_exceeded", code: "rate_limit_exceeded" } });

    double.reset();
    double.enqueue({ kind: "rate_limit", retryAfterSeconds: 0 }, { kind: "rate_limit", retryAfterSeconds: 0 });
    const err = await rejection(judge("x", { maxRetries: 1 }));
    expect(RetryError.isInstance(err)).toBe(true);
    const last = RetryError.isInstance(err) ? err.lastError : undefined;
    expect(APICallError.isInstance(last) && last.statusCode).toBe(429);
    expect(double.count()).toBe(2);

    double.enqueue({ kind: "rate_limit", retryAfterSeconds: 0 });
    expect((await judge("y", { maxRetries: 1 })).output.score).toBe(0.8);
    expect(double.count()).toBe(4);
  });

  it("returns server errors and other HTTP errors in OpenAI's error shape", async () => {
    double.enqueue({ kind: "server_error" }, { kind: "server_error", status: 503 }, { kind: "http_error", status: 400, message: "bad judge prompt" });
    for (const status of [500, 503]) {
      const err = await rejection(judge("x"));
      expect(APICallError.isInstance(err) && err.statusCode).toBe(status);
    }
    const err = await rejection(judge("x"));
    expect(APICallError.isInstance(err) && err.statusCode).toBe(400);
    expect(APICallError.isInstance(err) && err.isRetryable).toBe(false);
    expect((err as Error).message).toContain("bad judge prompt");
    expect(double.requests.map((r) => r.status)).toEqual([500, 503, 400]);
  });

  it("hangs until the client aborts, and close() still returns promptly", async () => {
    double.enqueue({ kind: "hang" });
    const controller = new AbortController();
    let settled = false;
    const pending = judge("x", { abortSignal: controller.signal }).finally(() => (settled = true));
    await eventually(() => double.inFlight() === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(settled).toBe(false);
    controller.abort();
    await rejection(pending);
    await eventually(() => double.inFlight() === 0);
    expect(double.requests[0]).toMatchObject({ behaviour: "hang", status: null });

    double.enqueue({ kind: "hang" });
    const hung = postChat(double).then(() => "answered", () => "socket closed");
    await eventually(() => double.inFlight() === 1);
    const started = Date.now();
    await double.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await hung).toBe("socket closed");
  });

  it("open() counts only the calls received since the last reset; inFlight() every call not yet closed", async () => {
    double.setDefault({ kind: "hang" });
    const before = new AbortController();
    const first = postChat(double, {}, before.signal).catch(() => "aborted");
    await eventually(() => double.inFlight() === 1);
    expect(double.open()).toBe(1);
    // A test ends with a call still open (its close not yet heard): the next test's count starts at 0.
    double.reset();
    double.setDefault({ kind: "hang" });
    expect([double.inFlight(), double.open()]).toEqual([1, 0]);
    const after = new AbortController();
    const second = postChat(double, {}, after.signal).catch(() => "aborted");
    await eventually(() => double.open() === 1);
    expect(double.inFlight()).toBe(2);
    before.abort();
    await first;
    await eventually(() => double.inFlight() === 1);
    expect(double.open()).toBe(1); // the earlier call's close does not count down this reset's
    expect(double.stats().peakInFlight).toBe(1);
    after.abort();
    await second;
    await eventually(() => double.open() === 0 && double.inFlight() === 0);
  });

  // More than the default 20 s: at load 30 on two cores this test once took longer (the file 38 s, 1–3 s
  // otherwise); nothing it asserts is a time.
  it("aborts a slow (latency) reply without leaking", { timeout: 60_000 }, async () => {
    double.enqueue({ kind: "default", latencyMs: 60_000 });
    const err = await rejection(judge("x", { abortSignal: AbortSignal.timeout(150) }));
    expect(err).toBeDefined();
    await eventually(() => double.inFlight() === 0);
    double.setLatency({ min: 1, max: 20 });
    expect((await judge("y")).output.score).toBe(0.8);
  });

  it("malformed content fails structured output while the raw text stays available", async () => {
    double.enqueue({ kind: "malformed" }, { kind: "malformed" }, { kind: "invalid_body" });
    const err = await rejection(judge("x"));
    expect(NoObjectGeneratedError.isInstance(err)).toBe(true);
    expect(NoObjectGeneratedError.isInstance(err) && err.text).toBe(MALFORMED_CONTENT);
    expect((await generateText({ model: chatModel(), prompt: "x", maxRetries: 0 })).text).toBe(MALFORMED_CONTENT);
    await rejection(judge("x"));
    expect(double.requests.map((r) => r.behaviour)).toEqual(["malformed", "malformed", "invalid_body"]);
  });

  it("applies rules by substring (with times) and by regex, after the queue", async () => {
    double.addRule({ match: "toxicity", behaviour: { kind: "verdict", body: { score: 0, reasoning: "rule" } }, times: 1 });
    double.addRule({ match: /HELPFUL/i, behaviour: { kind: "text", content: '```json\n{"score":0.5,"reasoning":"fenced"}\n```' } });
    expect((await judge("rate toxicity")).output.score).toBe(0);
    expect((await judge("rate toxicity again")).output.score).toBe(0.8);
    const { text } = await generateText({ model: chatModel(), prompt: "was it helpful?", maxRetries: 0 });
    expect(text).toContain("fenced");
    double.enqueue({ kind: "verdict", body: { score: 0.9, reasoning: "queue wins" } });
    expect((await judge("helpful")).output.score).toBe(0.9);
    expect(double.requests.map((r) => r.source)).toEqual(["rule", "default", "rule", "queue"]);
  });

  it("draws a seeded fault mix reproducibly and roughly in proportion", async () => {
    const mix: FaultMix = { rate_limit: 0.3, server_error: 0.2, malformed: 0.2 };
    const other = await startJudgeDouble({ seed: 7 });
    try {
      double.setFaults(mix, 7);
      await admin("faults", { ...mix, seed: 7 }).then((r) => expect(r.status).toBe(200));
      const kinds = async (d: JudgeDouble) => {
        if (d !== double) d.setFaults(mix);
        for (let i = 0; i < 50; i++) await (await postChat(d)).arrayBuffer();
        return d.requests.map((r) => r.behaviour);
      };
      const a = await kinds(double);
      const b = await kinds(other);
      expect(a).toEqual(b);
      expect(new Set(a).size).toBe(4);
    } finally {
      await other.close();
    }
    const rand = mulberry32(99);
    const tally: Record<string, number> = {};
    for (let i = 0; i < 5_000; i++) {
      const kind = drawFault(mix, rand)?.kind ?? "none";
      tally[kind] = (tally[kind] ?? 0) + 1;
    }
    expect(tally.rate_limit / 5_000).toBeCloseTo(0.3, 1);
    expect(tally.server_error / 5_000).toBeCloseTo(0.2, 1);
    expect(tally.none / 5_000).toBeCloseTo(0.3, 1);
  });

  it("is scriptable over the admin endpoints, which reject bad bodies with 400", async () => {
    expect((await admin("enqueue", [{ kind: "verdict", body: { score: 0.3, reasoning: "admin" } }])).status).toBe(200);
    expect((await admin("rules", { match: { regex: "^grade", flags: "i" }, behaviour: { kind: "server_error" } })).status).toBe(200);
    expect((await admin("default", { kind: "text", content: "admin default" })).status).toBe(200);
    expect((await admin("latency", { min: 0, max: 5 })).status).toBe(200);
    expect((await judge("anything")).output.score).toBe(0.3);
    expect((await postChat(double, { messages: [{ role: "user", content: "GRADE this" }] })).status).toBe(500);
    expect((await generateText({ model: chatModel(), prompt: "hi", maxRetries: 0 })).text).toBe("admin default");

    const stats = (await (await admin("stats", null, "GET")).json()) as { count: number; byKind: Record<string, number> };
    expect(stats).toMatchObject({ count: 3, inFlight: 0, byKind: { verdict: 1, server_error: 1, text: 1 } });
    const recorded = (await (await admin("requests", null, "GET")).json()) as { requests: unknown[] };
    expect(recorded.requests).toHaveLength(3);

    const bad: [string, unknown][] = [
      ["enqueue", "{not json"],
      ["enqueue", [{ kind: "explode" }]],
      ["enqueue", { kind: "hang", typo: true }],
      ["rules", { match: { regex: "(" }, behaviour: { kind: "hang" } }],
      ["faults", { rate_limit: 0.8, hang: 0.5 }],
      ["latency", { min: 10, max: 1 }],
      ["default", { kind: "http_error", status: 200 }],
    ];
    for (const [path, body] of bad) {
      const res = await admin(path, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(await res.json()).toMatchObject({ error: { type: "invalid_request_error", code: "invalid_admin_body" } });
    }
    expect((await admin("nope", {})).status).toBe(404);

    expect((await admin("reset", null)).status).toBe(200);
    expect(double.count()).toBe(0);
    expect(double.requests).toHaveLength(0);
    expect((await generateText({ model: chatModel(), prompt: "hi", maxRetries: 0 })).text).toBe(DEFAULT_PLAIN_TEXT);
  });

  it("records requests with redacted auth, serves /v1/models, 404s unknown paths", async () => {
    await (await postChat(double, { temperature: 0 })).arrayBuffer();
    expect(double.count()).toBe(1);
    expect(double.requests[0]).toMatchObject({
      method: "POST",
      path: "/v1/chat/completions",
      headers: { authorization: "Bearer ***" },
      body: { temperature: 0, messages: [{ role: "user", content: "hello" }] },
      behaviour: "default",
      status: 200,
    });
    expect(JSON.stringify(double.requests)).not.toContain("sk-secret");

    const models = (await (await fetch(`${double.baseURL}/models`)).json()) as { object: string; data: { id: string }[] };
    expect(models).toMatchObject({ object: "list", data: [{ id: "gpt-4o-mini", object: "model" }] });
    expect(double.count()).toBe(1);

    const missing = await fetch(`${double.baseURL}/embeddings`, { method: "POST", body: "{}" });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { message: expect.any(String), type: "invalid_request_error", code: "unknown_url" } });
  });

  it("enforces requireApiKey with an OpenAI-style 401", async () => {
    const locked = await startJudgeDouble({ requireApiKey: "xyz" });
    try {
      const res = await postChat(locked);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { code: "invalid_api_key" } });
      const ok = await generateText({ model: createOpenAI({ baseURL: locked.baseURL, apiKey: "xyz" }).chat("gpt-4o-mini"), prompt: "hi", maxRetries: 0 });
      expect(ok.text).toBe(DEFAULT_PLAIN_TEXT);
      expect(locked.requests.map((r) => r.status)).toEqual([401, 200]);
    } finally {
      await locked.close();
    }
  });
});
