import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import * as settings from "./judge/route";
import * as test from "./judge/test/route";

let double: JudgeDouble;
beforeAll(async () => {
  double = await startJudgeDouble();
});
afterAll(async () => {
  for (const k of ["OPENAI_BASE_URL", "OPENAI_API_KEY", "JUDGE_MAX_RETRIES", "JUDGE_CONTEXT_TOKENS", "JUDGE_CONTEXT_TOKENS_BY_MODEL"]) delete process.env[k];
  resetConfig();
  await double.close();
});

describe("judge settings", () => {
  it("shows the configuration in effect and never the key", async () => {
    process.env.OPENAI_BASE_URL = double.baseURL;
    process.env.OPENAI_API_KEY = "sk-very-secret-key";
    resetConfig();
    const res = await call(settings.GET, "GET", "/api/settings/judge");
    expect(res.json).toMatchObject({ configured: true, base_url: double.baseURL, api_key_set: true, default_model: "gpt-4o-mini", max_concurrency: 128 });
    expect(res.text).not.toContain("sk-very-secret-key");
    expect(res.json).toMatchObject({ context_tokens: 128_000, context_tokens_by_model: {} });
  });

  it("shows the judge models' context windows", async () => {
    process.env.JUDGE_CONTEXT_TOKENS = "32000";
    process.env.JUDGE_CONTEXT_TOKENS_BY_MODEL = '{"llama3.1": 8192}';
    resetConfig();
    const res = await call(settings.GET, "GET", "/api/settings/judge");
    expect(res.json).toMatchObject({ context_tokens: 32_000, context_tokens_by_model: { "llama3.1": 8192 } });
    delete process.env.JUDGE_CONTEXT_TOKENS;
    delete process.env.JUDGE_CONTEXT_TOKENS_BY_MODEL;
    resetConfig();
  });

  it("tests the connection with a real structured call, and reports failures plainly", async () => {
    process.env.OPENAI_BASE_URL = double.baseURL;
    process.env.JUDGE_MAX_RETRIES = "0";
    resetConfig();
    const ok = await call(test.POST, "POST", "/api/settings/judge/test");
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ ok: true, model: "gpt-4o-mini" });
    double.enqueue({ kind: "http_error", status: 401, message: "invalid api key" });
    const bad = await call(test.POST, "POST", "/api/settings/judge/test", { body: { model_name: "openai/gpt-4o" } });
    expect(bad.json).toMatchObject({ ok: false, model: "openai/gpt-4o" });
    expect(bad.json.message).toMatch(/401/);
    expect((await call(test.POST, "POST", "/api/settings/judge/test", { body: { model_name: 5 } })).status).toBe(400);
    delete process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_API_KEY;
    resetConfig();
    const none = await call(test.POST, "POST", "/api/settings/judge/test");
    expect(none.json).toMatchObject({ ok: false, message: "no judge model configured: set OPENAI_API_KEY or OPENAI_BASE_URL" });
  });
});
