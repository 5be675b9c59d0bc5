/**
 * Issue 49.3: the model writes a mapping when the structural reader cannot. The judge test double stands
 * in for the model through the real client, scripted with the answers a model gives: one that is not a
 * mapping, one that is a mapping but reads nothing of the file, then the right one. Each failure goes back
 * to it; the right mapping is offered checked and scored, and it imports the file; every call is counted.
 */
import { beforeEach, describe, expect, it } from "vitest";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as settings from "@/app/api/settings/judge/route";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import { parseUpload } from "../parse";
import { skeletonOf } from "./skeleton";

/** A shape no adapter and no proposal reads: sessions keyed by id, each message `{w, t}` with speaker codes the reader cannot place. */
const file = JSON.stringify({
  exported: "2026-11-01",
  sessions: {
    s1: { title: "Refund", log: [{ w: "C", t: "I want my money back for order 42" }, { w: "A", t: "I can refund order 42 today." }, { w: "C", t: "Thanks!" }, { w: "A", t: "Done: refund issued." }] },
    s2: { title: "Address", log: [{ w: "C", t: "Change my address please" }, { w: "A", t: "Sure, what is the new address?" }, { w: "C", t: "1 Main St" }, { w: "A", t: "Updated to 1 Main St." }] },
    s3: { title: "Hours", log: [{ w: "C", t: "When are you open?" }, { w: "A", t: "From 9 to 5, Monday to Friday." }] },
  },
});

const right = {
  version: 2,
  records: { path: "sessions" },
  conversations: { from: "records", messages: "log" },
  message: { role: "w", roles: { C: "user", A: "assistant" }, content: "t" },
  name: "title",
};

const judgeDouble = withJudgeDouble({ OPENAI_API_KEY: "test-key", JUDGE_MODEL: "gpt-4o-mini" });
let double: JudgeDouble;
beforeEach(() => {
  double = judgeDouble();
});

const mappingCalls = async () => (await call(settings.GET, "GET", "/api/settings/judge")).json.side_calls.import_mapping.judge_calls as number;

describe("the model writes a mapping the structural reader could not", () => {
  it("the skeleton says the file's shape in bounded size, never the whole file", () => {
    const big = JSON.stringify({ sessions: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`s${i}`, { log: [{ w: "C", t: "x".repeat(5000) }] }])) });
    const parsed = parseUpload(big);
    expect(parsed.ok).toBe(true);
    const skeleton = skeletonOf(parsed as Extract<typeof parsed, { ok: true }>)!;
    expect(skeleton.length).toBeLessThanOrEqual(6000);
    expect(skeleton).toContain("sessions");
    expect(skeleton).toContain("(5000 chars)");
  });

  it("wrong, wrong, then right: each failure goes back to the model, the right mapping is offered checked and imports the file", async () => {
    const before = await mappingCalls();
    double.enqueue(
      { kind: "verdict", body: { analysis: "The file is not in a known format.", transformation: null } }, // the feedback
      { kind: "text", content: "Here is a mapping: {\"version\": 2, \"conversations\": {\"from\": \"nowhere\"}}" }, // not a mapping
      { kind: "text", content: JSON.stringify({ version: 2, records: { path: "missing" }, conversations: { from: "records", messages: "log" } }) }, // reads nothing
      { kind: "text", content: "```json\n" + JSON.stringify(right) + "\n```" },
    );
    const res = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "sessions" } });
    expect(res.status, res.text).toBe(422);
    const feedback = res.json.llm_feedback;
    expect(feedback.suggested_mapping).toEqual(right);
    expect(feedback).toMatchObject({ mapping_by: "gpt-4o-mini", mapping_rounds: 3 });
    expect(feedback.mapping_score).toMatchObject({ conversations: 3, turns_plausible: 1 });
    expect(feedback.mapping_score.text_kept).toBeGreaterThan(0.8);
    expect(feedback.usage.judge_calls).toBe(4); // the feedback and three mapping rounds
    expect((await mappingCalls()) - before).toBe(3);
    // What went back to the model: its failures, with the skeleton and never the whole file.
    const prompts = double.requests.slice(1).map((r) => JSON.stringify((r.body as { messages: unknown[] }).messages));
    expect(prompts[1]).toContain("It failed: it is not a valid mapping");
    expect(prompts[2]).toContain("It failed: ");
    expect(prompts[0]).toContain("sessions");
    // The offered mapping imports the file.
    const imported = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "sessions", mapping: JSON.stringify(feedback.suggested_mapping) } });
    expect(imported.status, imported.text).toBe(201);
    expect(imported.json).toMatchObject({ conversations_imported: 3, messages_imported: 10 });
  });

  it("a model that never gets it right: the refusal says so after the rounds, and offers no mapping", async () => {
    double.enqueue({ kind: "verdict", body: { analysis: "Unknown format.", transformation: null } });
    for (let i = 0; i < 3; i++) double.enqueue({ kind: "text", content: "I cannot tell." });
    const res = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "sessions" } });
    expect(res.status).toBe(422);
    expect(res.json.llm_feedback.suggested_mapping).toBeUndefined();
    expect(res.json.llm_feedback.analysis).toMatch(/asked for a mapping 3 times and none imported the file/);
    expect(res.json.llm_feedback.usage.judge_calls).toBe(4);
  });

  it("without a judge model nothing is asked: the refusal stands as before", async () => {
    delete process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_API_KEY;
    resetConfig();
    const res = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "sessions" } });
    expect(res.status).toBe(422);
    expect(res.json.llm_feedback.generated_by).toBe("rules");
    expect(res.json.llm_feedback.suggested_mapping).toBeUndefined();
    expect(double.count()).toBe(0);
  });
});
