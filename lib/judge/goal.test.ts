import { beforeEach, describe, expect, it } from "vitest";
import { getStoredGoal } from "@/db/repositories/judge";
import { resetConfig } from "@/lib/config";
import { createDataset } from "@/lib/datasets";
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import { insertConversationFixture } from "@/lib/testing/seed/rows";
import { ensureGoal } from "./goal";

const judgeDouble = withJudgeDouble();
let double: JudgeDouble;
beforeEach(() => {
  double = judgeDouble();
});

async function conversation() {
  const ds = await createDataset({ name: "goals", userId: "default" });
  const { conversationId } = await insertConversationFixture(ds.id);
  return { conversationId, transcript: "[user]: find x\n[assistant]: found x", firstUserMessage: "find x" };
}

describe("@GOAL extraction", () => {
  it("extracts once per conversation, stores it, and shares one call among concurrent metrics", async () => {
    const input = await conversation();
    double.enqueue({ kind: "verdict", body: { goal: "Find x quickly" }, latencyMs: 50 });
    const results = await Promise.all([ensureGoal(input), ensureGoal(input), ensureGoal(input)]);
    expect(results.map((r) => r.goal)).toEqual(["Find x quickly", "Find x quickly", "Find x quickly"]);
    expect(double.count()).toBe(1);
    expect(await getStoredGoal(input.conversationId)).toEqual({ goal: "Find x quickly", generatedBy: "gpt-4o-mini" });
    // Later runs reuse the stored goal without a call.
    expect(await ensureGoal(input)).toEqual({ goal: "Find x quickly", generated_by: "gpt-4o-mini" });
    expect(double.count()).toBe(1);
    const prompt = (double.requests[0].body as { messages: Array<{ content: string }> }).messages.at(-1)!.content;
    expect(prompt).toContain("<conversation_data>\n[user]: find x");
  });

  it("refreshes when asked", async () => {
    const input = await conversation();
    double.enqueue({ kind: "verdict", body: { goal: "First" } }, { kind: "verdict", body: { goal: "Second" } });
    await ensureGoal(input);
    expect((await ensureGoal({ ...input, refresh: true })).goal).toBe("Second");
    expect((await getStoredGoal(input.conversationId))?.goal).toBe("Second");
  });

  it("falls back to the first user message without a model or when the call fails, storing nothing", async () => {
    const input = await conversation();
    delete process.env.OPENAI_BASE_URL;
    resetConfig();
    expect(await ensureGoal(input)).toEqual({ goal: "find x", generated_by: "first_user_message" });
    process.env.OPENAI_BASE_URL = double.baseURL;
    process.env.JUDGE_MAX_RETRIES = "0";
    resetConfig();
    double.enqueue({ kind: "http_error", status: 400 });
    expect(await ensureGoal(input)).toEqual({ goal: "find x", generated_by: "first_user_message" });
    expect((await getStoredGoal(input.conversationId))?.goal).toBeNull();
    delete process.env.JUDGE_MAX_RETRIES;
  });
});
