/**
 * Issue 48, finding 13: a refused import that asks the judge for feedback is a provider call, and it is
 * counted where a user reads money — the refusal's own `llm_feedback.usage` (calls, tokens, cost priced
 * with JUDGE_PRICES) and this server's totals in `GET /api/settings/judge` (`side_calls.import_feedback`),
 * a call that failed included. The judge test double stands in for the model and bills what it answers.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as settings from "@/app/api/settings/judge/route";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";

const refused = fs.readFileSync(path.join(process.cwd(), "e2e/fixtures", "invalid-roles.json"), "utf8");
const PRICE = { input: 2, output: 8 }; // USD per million tokens

let double: JudgeDouble;

beforeAll(async () => {
  double = await startJudgeDouble();
});

afterAll(async () => {
  for (const k of ["OPENAI_BASE_URL", "OPENAI_API_KEY", "JUDGE_MODEL", "JUDGE_PRICES"]) delete process.env[k];
  resetConfig();
  await double.close();
});

beforeEach(() => {
  double.reset();
  process.env.OPENAI_BASE_URL = double.baseURL;
  process.env.OPENAI_API_KEY = "test-key";
  process.env.JUDGE_MODEL = "gpt-4o-mini";
  process.env.JUDGE_PRICES = JSON.stringify({ "gpt-4o-mini": PRICE });
  resetConfig();
});

const totals = async () => (await call(settings.GET, "GET", "/api/settings/judge")).json.side_calls.import_feedback as { judge_calls: number; input_tokens: number; output_tokens: number; cost_usd: number | null };

describe("the judge calls of import feedback are counted (issue 48, finding 13)", () => {
  it("the refusal says what its feedback cost, and the server's totals add it", async () => {
    const before = await totals();
    double.enqueue({ kind: "verdict", body: { analysis: "Roles use another tool's names.", transformation: null } });
    const res = await upload(createAndImport.POST, "/api/datasets/import", { file: refused, fields: { name: "x" } });
    expect(res.status).toBe(422);
    expect(res.json.llm_feedback.generated_by).toBe("gpt-4o-mini");
    const billed = double.stats().billed;
    expect(billed.replies).toBe(1);
    const cost = (billed.prompt_tokens * PRICE.input + billed.completion_tokens * PRICE.output) / 1_000_000;
    expect(res.json.llm_feedback.usage).toEqual({ judge_calls: 1, input_tokens: billed.prompt_tokens, output_tokens: billed.completion_tokens, cost_usd: expect.closeTo(cost, 12) });
    expect(cost).toBeGreaterThan(0);

    const after = await totals();
    expect(after.judge_calls - before.judge_calls).toBe(1);
    expect(after.input_tokens - before.input_tokens).toBe(billed.prompt_tokens);
    expect(after.output_tokens - before.output_tokens).toBe(billed.completion_tokens);
    expect((after.cost_usd ?? NaN) - (before.cost_usd ?? NaN)).toBeCloseTo(cost, 12);
  });

  it("a call that failed is counted too (the rules wrote the feedback), and no call is counted when none was made", async () => {
    const before = await totals();
    double.enqueue({ kind: "server_error" });
    const failed = await upload(createAndImport.POST, "/api/datasets/import", { file: refused, fields: { name: "x" } });
    expect(failed.status).toBe(422);
    expect(failed.json.llm_feedback.generated_by).toBe("rules");
    expect(failed.json.llm_feedback.usage).toEqual({ judge_calls: 1, input_tokens: 0, output_tokens: 0, cost_usd: 0 });
    expect((await totals()).judge_calls - before.judge_calls).toBe(1);

    const none = await upload(createAndImport.POST, "/api/datasets/import", { file: refused, fields: { name: "x", get_feedback: "false" } });
    expect(none.json.llm_feedback).toBeUndefined();
    delete process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_API_KEY;
    resetConfig();
    const rulesOnly = await upload(createAndImport.POST, "/api/datasets/import", { file: refused, fields: { name: "x" } });
    expect(rulesOnly.json.llm_feedback.generated_by).toBe("rules");
    expect(rulesOnly.json.llm_feedback).not.toHaveProperty("usage");
    expect((await totals()).judge_calls - before.judge_calls).toBe(1);
    expect(double.count()).toBe(1);
  });
});
