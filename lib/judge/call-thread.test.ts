import { APICallError } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { callOnThread, judgeThreadCalls, stopJudgeThread, warmJudgeThread, type ThreadCall } from "./call-thread";

let double: JudgeDouble;
beforeAll(async () => {
  double = await startJudgeDouble();
});
afterAll(async () => {
  await stopJudgeThread();
  await double.close();
});
beforeEach(() => double.reset());

const call = (prompt = `Rate this ${Math.random()}`, timeoutMs = 5000): ThreadCall => ({
  baseURL: double.baseURL,
  apiKey: "sk-thread",
  model: "gpt-4o-mini",
  turns: [{ role: "user", content: prompt }],
  system: "You are a judge.",
  schema: { type: "object", properties: { score: { type: "number" } }, required: ["score"] },
  timeoutMs,
});

describe("the judge thread", () => {
  // The first test starts the thread, which loads the AI SDK on it: at load 30 on two cores that alone
  // took over 20 s (the file 87 s), so this test gets more time; what it asserts takes no time.
  it("makes the provider call off the event loop and returns the reply, usage included", { timeout: 120_000 }, async () => {
    await warmJudgeThread();
    // The thread warms up against a stand-in of its own: nothing reaches the provider before a call.
    expect(double.count()).toBe(0);
    const before = judgeThreadCalls();
    const res = await callOnThread(call("Rate the answer about refunds"), undefined);
    expect(judgeThreadCalls()).toBe(before + 1);
    expect(res.parsed).toBe(true);
    expect(res.value).toEqual(JSON.parse(res.text));
    expect(res.inputTokens).toBeGreaterThan(0);
    const sent = double.requests.at(-1)!;
    expect(sent.body).toMatchObject({ model: "gpt-4o-mini", temperature: 0, response_format: { type: "json_schema", json_schema: { name: "verdict" } } });
    expect(JSON.stringify(sent.body)).toContain("Rate the answer about refunds");
    expect(sent.headers.authorization).toBe("Bearer ***");
  });

  it("passes a 429 back as the provider's error, Retry-After included", async () => {
    double.enqueue({ kind: "rate_limit", retryAfterSeconds: 2 });
    const error = await callOnThread(call(), undefined).catch((e: unknown) => e);
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ statusCode: 429 });
    expect((error as APICallError).responseHeaders?.["retry-after"]).toBe("2");
  });

  it("times a hung call out on the thread", async () => {
    double.enqueue({ kind: "hang" });
    const error = await callOnThread(call(undefined, 300), undefined).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "JudgeTimeoutError", message: "judge call timed out after 300 ms" });
    await expect.poll(() => double.inFlight()).toBe(0);
  });

  it("a cancel rejects at once with the caller's reason and closes the request at the provider", async () => {
    double.enqueue({ kind: "hang" });
    const controller = new AbortController();
    const pending = callOnThread(call(), controller.signal);
    await expect.poll(() => double.inFlight(), { timeout: 5000 }).toBe(1);
    controller.abort(new Error("cancelled by user"));
    await expect(pending).rejects.toThrow("cancelled by user");
    await expect.poll(() => double.inFlight()).toBe(0);
    // Already cancelled: nothing is sent.
    const count = double.count();
    await expect(callOnThread(call(), controller.signal)).rejects.toThrow("cancelled by user");
    expect(double.count()).toBe(count);
  });

  it("when the thread dies, the calls it held are made in process and still answer", async () => {
    double.setLatency(400);
    await warmJudgeThread();
    const pending = Promise.all([callOnThread(call(), undefined), callOnThread(call(), undefined)]);
    await expect.poll(() => double.inFlight(), { timeout: 5000 }).toBe(2);
    await stopJudgeThread();
    const replies = await pending;
    expect(replies.map((r) => r.parsed)).toEqual([true, true]);
    // The next call starts a new thread.
    const before = judgeThreadCalls();
    await callOnThread(call(), undefined);
    expect(judgeThreadCalls()).toBe(before + 1);
  });
});

describe("the judge thread where `npm run worker` runs (tsx, not the Next.js build)", () => {
  it("starts from the TypeScript source and answers the call on the thread", async () => {
    const { execFile } = await import("node:child_process");
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ["--import", "tsx", "--conditions=react-server", "lib/judge/testing/thread-probe.ts"],
        { env: { ...process.env, PROBE_BASE_URL: double.baseURL, LOG_LEVEL: "warn", NEXT_RUNTIME: "" }, timeout: 60_000 },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stdout}\n${stderr}`)) : resolve(stdout + stderr)),
      ),
    );
    // No "judge thread unavailable" warning: the call did not fall back to the process.
    expect(out).not.toContain("unavailable");
    const line = JSON.parse(out.split("\n").find((l) => l.startsWith('{"onThread"'))!) as { onThread: number; text: string };
    expect(line.onThread).toBe(1);
    expect(JSON.parse(line.text)).toHaveProperty("score");
  }, 90_000);
});
