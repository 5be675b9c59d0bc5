/**
 * The judge's own fetch (undici dispatch under a standard Response), against real HTTP servers: the
 * judge test double, and a small raw server for what the double cannot do (a body that stops half-way,
 * TLS). Where the platform fetch defines the behaviour, both are asked and must agree.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, Output, streamText } from "ai";
import { Agent } from "undici";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { clearJudgeCache } from "@/db/repositories/judge";
import { resetConfig } from "@/lib/config";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { createJudgeFetch, platformFetch } from "./http-fetch";
import { judge, type JudgeDeps } from "./judge";
import { verdictSchema } from "./verdicts";

let double: JudgeDouble;
const agent = new Agent();
const judgeFetch = createJudgeFetch(agent);
const chatBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Rate this." }], ...extra });
const post = (body: string | Uint8Array<ArrayBuffer>, signal?: AbortSignal): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer sk-test" },
  body,
  signal,
});

/** A port nothing listens on: bound once, then closed. */
async function refusedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A raw server whose handler the test writes; closed (sockets and all) after the test. */
async function rawServer(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

beforeAll(async () => {
  double = await startJudgeDouble();
});
afterAll(async () => {
  await double.close();
  await agent.close();
});
beforeEach(() => double.reset());

describe("judge fetch: what the AI SDK reads from a response", () => {
  it("posts a string or a byte body and returns status, headers and the JSON reply", async () => {
    double.enqueue({ kind: "verdict", body: { score: 0.3, reasoning: "ok" } });
    const res = await judgeFetch(`${double.baseURL}/chat/completions`, post(chatBody()));
    expect(res).toBeInstanceOf(Response);
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    const json = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(JSON.parse(json.choices[0].message.content)).toEqual({ score: 0.3, reasoning: "ok" });
    const sent = double.requests.at(-1)!;
    expect(sent.body).toMatchObject({ model: "gpt-4o-mini" });
    expect(sent.headers.authorization).toBe("Bearer ***");

    const bytes = await judgeFetch(`${double.baseURL}/chat/completions`, post(new TextEncoder().encode(chatBody({ model: "from-bytes" }))));
    expect(bytes.status).toBe(200);
    await bytes.text();
    expect(double.requests.at(-1)!.body).toMatchObject({ model: "from-bytes" });
  });

  it("sends headers given as a Headers object, as pairs or as a record (undefined values left out)", async () => {
    const url = `${double.baseURL}/chat/completions`;
    const variants: HeadersInit[] = [
      new Headers({ "Content-Type": "application/json", "X-Judge-Test": "headers" }),
      [["content-type", "application/json"], ["x-judge-test", "pairs"]],
      { "content-type": "application/json", "X-Judge-Test": "record", "x-left-out": undefined } as unknown as Record<string, string>,
    ];
    for (const headers of variants) {
      await (await judgeFetch(url, { method: "POST", headers, body: chatBody() })).text();
      const sent = double.requests.at(-1)!.headers;
      expect(sent["x-judge-test"]).toBe(headers instanceof Headers ? "headers" : Array.isArray(headers) ? "pairs" : "record");
      expect(sent["content-type"]).toBe("application/json");
      expect(sent.accept).toBe("*/*");
      expect(sent).not.toHaveProperty("x-left-out");
    }
  });

  it("keeps the status, its text and Retry-After of a 429, and the JSON error of a 500, as the platform fetch does", async () => {
    double.enqueue({ kind: "rate_limit", retryAfterSeconds: 3 }, { kind: "rate_limit", retryAfterSeconds: 3 });
    const ours = await judgeFetch(`${double.baseURL}/chat/completions`, post(chatBody()));
    const theirs = await platformFetch(`${double.baseURL}/chat/completions`, post(chatBody()));
    expect(ours.status).toBe(429);
    expect(ours.headers.get("retry-after")).toBe("3");
    expect([ours.status, ours.statusText, ours.headers.get("retry-after")]).toEqual([theirs.status, theirs.statusText, theirs.headers.get("retry-after")]);
    expect(await ours.json()).toEqual(await theirs.json());

    double.enqueue({ kind: "server_error" });
    const failed = await judgeFetch(`${double.baseURL}/chat/completions`, post(chatBody()));
    expect([failed.status, failed.statusText]).toEqual([500, "Internal Server Error"]);
    expect(await failed.json()).toMatchObject({ error: { type: "server_error" } });
  });

  it("streams the body as it arrives: the first SSE event is readable before the server sends the rest", async () => {
    let sendRest!: () => void;
    const rest = new Promise<void>((resolve) => (sendRest = resolve));
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('data: {"n":1}\n\n');
      void rest.then(() => res.end('data: {"n":2}\n\ndata: [DONE]\n\n'));
    });
    try {
      const res = await judgeFetch(server.url, post(chatBody({ stream: true })));
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      const first = await reader.read();
      expect(first.value).toBe('data: {"n":1}\n\n');
      sendRest();
      let tail = "";
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) tail += chunk.value;
      expect(tail).toBe('data: {"n":2}\n\ndata: [DONE]\n\n');
    } finally {
      await server.close();
    }
  });

  it("carries the AI SDK's streaming chat (SSE deltas assembled into the reply)", async () => {
    double.enqueue({ kind: "text", content: "a streamed verdict in several pieces" });
    const model = createOpenAI({ baseURL: double.baseURL, apiKey: "sk-test", fetch: judgeFetch }).chat("gpt-4o-mini");
    const result = streamText({ model, prompt: "Rate this." });
    expect(await result.text).toBe("a streamed verdict in several pieces");
    expect(double.requests.at(-1)!.body).toMatchObject({ stream: true });
  });

  it("rejects a refused connection with TypeError 'fetch failed' and the same cause as the platform fetch", async () => {
    const url = `http://127.0.0.1:${await refusedPort()}/v1/chat/completions`;
    const ours = await judgeFetch(url, post(chatBody())).catch((e: unknown) => e);
    const theirs = await platformFetch(url, post(chatBody())).catch((e: unknown) => e);
    expect(ours).toBeInstanceOf(TypeError);
    expect((ours as TypeError).message).toBe("fetch failed");
    expect(((ours as TypeError).cause as { code?: string }).code).toBe("ECONNREFUSED");
    expect([(ours as TypeError).message, ((ours as TypeError).cause as { code?: string }).code]).toEqual([
      (theirs as TypeError).message,
      ((theirs as TypeError).cause as { code?: string }).code,
    ]);
  });

  it("aborts a call in flight: rejects with the signal's reason (an AbortError by default) and closes the request", async () => {
    double.enqueue({ kind: "hang" }, { kind: "hang" });
    const plain = new AbortController();
    const pending = judgeFetch(`${double.baseURL}/chat/completions`, post(chatBody(), plain.signal));
    await expect.poll(() => double.inFlight(), { timeout: 5000 }).toBe(1);
    plain.abort();
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe("AbortError");
    await expect.poll(() => double.inFlight(), { timeout: 5000 }).toBe(0);

    const withReason = new AbortController();
    const second = judgeFetch(`${double.baseURL}/chat/completions`, post(chatBody(), withReason.signal));
    await expect.poll(() => double.inFlight(), { timeout: 5000 }).toBe(1);
    const reason = new Error("cancelled by user");
    withReason.abort(reason);
    await expect(second).rejects.toBe(reason);
    await expect.poll(() => double.inFlight(), { timeout: 5000 }).toBe(0);

    const already = new AbortController();
    already.abort();
    await expect(judgeFetch(`${double.baseURL}/chat/completions`, post(chatBody(), already.signal))).rejects.toMatchObject({ name: "AbortError" });
  });

  it("errors the body with the abort reason when aborted mid-body, and with TypeError 'terminated' when the server drops it", async () => {
    const server = await rawServer((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('data: {"n":1}\n\n');
      if (req.url === "/drop") setTimeout(() => res.socket?.destroy(), 20);
    });
    try {
      const controller = new AbortController();
      const res = await judgeFetch(`${server.url}/hold`, post(chatBody({ stream: true }), controller.signal));
      const reader = res.body!.getReader();
      expect((await reader.read()).done).toBe(false);
      controller.abort();
      await expect(reader.read()).rejects.toMatchObject({ name: "AbortError" });

      const dropped = await judgeFetch(`${server.url}/drop`, post(chatBody({ stream: true })));
      const error = await dropped.text().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as TypeError).message).toBe("terminated");
    } finally {
      await server.close();
    }
  });

  it("speaks https (real providers are https)", async (ctx) => {
    let tls: { key: string; cert: string };
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "judge-fetch-tls-"));
    try {
      // A throw-away self-signed certificate for 127.0.0.1; no openssl, no TLS test.
      execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
        "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem")], { stdio: "ignore" });
      tls = { key: fs.readFileSync(path.join(dir, "key.pem"), "utf8"), cert: fs.readFileSync(path.join(dir, "cert.pem"), "utf8") };
    } catch {
      ctx.skip();
      return;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const server = https.createServer(tls, (req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString("utf8")));
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ echoed: JSON.parse(body) as unknown, secure: true }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const tlsAgent = new Agent({ connect: { ca: tls.cert } });
    try {
      const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
      const res = await createJudgeFetch(tlsAgent)(url, post(chatBody()));
      expect(await res.json()).toEqual({ echoed: { model: "gpt-4o-mini", messages: [{ role: "user", content: "Rate this." }] }, secure: true });
      // An untrusted certificate is a network failure, as with fetch.
      const untrusted = await createJudgeFetch(new Agent())(url, post(chatBody())).catch((e: unknown) => e);
      expect(untrusted).toBeInstanceOf(TypeError);
      expect((untrusted as TypeError).message).toBe("fetch failed");
    } finally {
      await tlsAgent.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("judge calls over the judge fetch (the platform fetch must not be used)", () => {
  const sleeps: number[] = [];
  const deps: JudgeDeps = { retry: { random: () => 0.5, sleep: async (ms) => void sleeps.push(ms) } };
  const original = globalThis.fetch;
  let platformCalls = 0;
  const progress = () => ({ model: "gpt-4o-mini", prompt: `Rate this ${Math.random()}`, outputType: "progress" }) as const;

  const configure = (env: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    resetConfig();
  };

  beforeEach(() => {
    sleeps.length = 0;
    platformCalls = 0;
    clearJudgeCache();
    globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
      platformCalls++;
      return original(input, init);
    }) as typeof fetch;
    // A ceiling no answer of the double comes near, even on a loaded machine (the first call of a process
    // took over 5 s at load 30 and was retried as a time-out); the time-out test sets its own.
    configure({ OPENAI_BASE_URL: double.baseURL, OPENAI_API_KEY: "sk-test", JUDGE_MAX_RETRIES: "3", JUDGE_TIMEOUT_MS: "60000" });
  });
  afterEach(() => {
    globalThis.fetch = original;
    expect(platformCalls).toBe(0);
    configure({ OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined, JUDGE_MAX_RETRIES: undefined, JUDGE_TIMEOUT_MS: undefined });
  });

  it("returns a verdict", async () => {
    double.enqueue({ kind: "verdict", body: { score: 0.25, reasoning: "partly" } });
    const out = await judge(progress(), deps);
    expect(out).toMatchObject({ status: "completed", score: 0.25, result: { score: 0.25, reasoning: "partly" }, attempts: 1 });
    expect(out.inputTokens).toBeGreaterThan(0);
    expect(double.count()).toBe(1);
  });

  it("sends the chat request generateText with Output.object sent, the repair turns included", async () => {
    double.enqueue({ kind: "text", content: "not json" }, { kind: "verdict", body: { score: 0.5, reasoning: "fixed" } });
    const req = { model: "gpt-4o-mini", system: "You are a judge.", prompt: "Rate this.", outputType: "progress" } as const;
    expect(await judge(req, deps)).toMatchObject({ status: "completed", score: 0.5, attempts: 2 });
    const [first, repair] = double.requests.slice(-2).map((r) => r.body as { messages: { role: string; content: string }[] });
    expect(repair.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(repair.messages[2].content).toBe("not json");

    // The same calls through generateText, as the judge made them before it called the provider directly.
    const model = createOpenAI({ baseURL: double.baseURL, apiKey: "sk-test", name: "judge", fetch: judgeFetch }).chat("gpt-4o-mini");
    const schema = verdictSchema("progress", undefined);
    for (const expected of [first, repair]) {
      await generateText({
        model,
        system: req.system,
        messages: expected.messages.slice(1).map((m) => ({ role: m.role as "user" | "assistant", content: m.content })),
        output: Output.object({ schema: jsonSchema(schema), name: "verdict" }),
        temperature: 0,
        maxRetries: 0,
        providerOptions: { openai: { strictJsonSchema: false } },
      });
      expect(double.requests.at(-1)!.body).toEqual(expected);
    }
  });

  it("honours Retry-After on a 429 and retries a 500", async () => {
    double.enqueue({ kind: "rate_limit", retryAfterSeconds: 2 }, { kind: "server_error" });
    const out = await judge(progress(), deps);
    expect(out).toMatchObject({ status: "completed", attempts: 3, rateLimited: 1 });
    expect(sleeps[0]).toBeGreaterThanOrEqual(2000);
    expect(sleeps[0]).toBeLessThan(2300);
    expect(sleeps[1]).toBe(250); // the 500 is the first fault (429s are counted apart): random() = 0.5 of 500·2^0
    expect(double.count()).toBe(3);
  });

  it("times out a hanging judge with the recorded reason", async () => {
    configure({ JUDGE_TIMEOUT_MS: "300", JUDGE_MAX_RETRIES: "1" });
    double.enqueue({ kind: "hang" }, { kind: "hang" });
    const out = await judge(progress(), deps);
    expect(out).toMatchObject({ status: "failed", attempts: 2 });
    expect(out.error).toBe("judge call timed out after 300 ms after 2 attempts: no reply from the provider (JUDGE_TIMEOUT_MS sets the limit)");
    await expect.poll(() => double.inFlight(), { timeout: 5000 }).toBe(0);
  });

  it("fails the cell with a clear error when the judge refuses connections, after retrying", async () => {
    configure({ OPENAI_BASE_URL: `http://127.0.0.1:${await refusedPort()}/v1` });
    const out = await judge(progress(), deps);
    expect(out.status).toBe("failed");
    expect(out.error).toMatch(/^judge unreachable after 4 attempts: Cannot connect to API: connect ECONNREFUSED 127\.0\.0\.1:\d+/);
    expect(sleeps).toHaveLength(3);
  });

  it("aborts the call in flight when the run is cancelled, and throws the cancel reason", async () => {
    double.enqueue({ kind: "hang" });
    const controller = new AbortController();
    const pending = judge({ ...progress(), signal: controller.signal }, deps);
    await expect.poll(() => double.inFlight(), { timeout: 5000 }).toBe(1);
    controller.abort(new Error("cancelled by user"));
    await expect(pending).rejects.toThrow("cancelled by user");
    await expect.poll(() => double.inFlight(), { timeout: 5000 }).toBe(0);
    expect(double.count()).toBe(1);
    expect(sleeps).toHaveLength(0);
  });
});
