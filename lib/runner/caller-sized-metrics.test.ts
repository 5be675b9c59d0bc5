/**
 * Issue 48, finding 12, through the routes: metric definitions whose work a caller sizes. Before:
 * `tool_sequence` with `contiguous` compared every window of the calls with the whole list (40,000 calls
 * × 20,000 tools: 2.2 s on the loop) and took a list of any length; a metric's `output_schema` of 148 KB
 * was saved (the 32 KB / 100-pattern limit of checks skipped) and every cell then failed after four judge
 * calls; an LLM metric over a 20 MB message sent it whole to the provider, four attempts.
 */
import { describe, expect, it } from "vitest";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as results from "@/app/api/evaluation-pipeline-executions/[id]/results/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as nodes from "@/app/api/evaluation-pipeline-nodes/route";
import { MAX_CHECK_TOOLS } from "@/lib/checks/required-tools";
import { occursContiguously } from "@/lib/checks/tool-sequence";
import { call } from "@/lib/testing/http/call";
import { healthReadBoundMs, whileReadingHealth } from "@/lib/testing/http/health-reads";
import { upload } from "@/lib/testing/http/multipart";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import { waitForExecution } from "./run";

const double = withJudgeDouble({ JUDGE_MAX_RETRIES: "3" });

const createMetric = (body: Record<string, unknown>) => call(nodes.POST, "POST", "/api/evaluation-pipeline-nodes", { body });

async function importDataset(name: string, conversations: unknown[]): Promise<number> {
  const res = await upload(createAndImport.POST, "/api/datasets/import", { file: JSON.stringify({ conversations }), fields: { name } });
  expect(res.status).toBe(201);
  return res.json.dataset.id as number;
}

type Result = { status: string; result: { value: unknown; reasoning: string } | null; error: string | null };

async function runAll(datasetId: number): Promise<Result[]> {
  const started = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", { body: { dataset_id: datasetId, execution_mode: "async" } });
  expect(started.status).toBe(202);
  await waitForExecution(started.json.id);
  return (await call(results.GET, "GET", "/x?limit=100", { params: { id: started.json.id } })).json.results as Result[];
}

describe("tool_sequence: linear in the calls, its list bounded", () => {
  it("matches a run of consecutive calls as before, in linear time over a hostile repetition", () => {
    expect(occursContiguously(["a", "b"], ["x", "a", "b", "y"])).toBe(true);
    expect(occursContiguously(["a", "b"], ["a", "x", "b"])).toBe(false);
    expect(occursContiguously(["a", "a", "b"], ["a", "a", "a", "b"])).toBe(true);
    expect(occursContiguously(["a", "b", "a", "c"], ["a", "b", "a", "b", "a", "c"])).toBe(true);
    // 200,000 calls of "a" against 20,000 × "a" then "b": the window comparison did 4·10^9 steps.
    const sequence = [...Array<string>(19_999).fill("a"), "b"];
    const called = Array<string>(200_000).fill("a");
    const t0 = performance.now();
    expect(occursContiguously(sequence, called)).toBe(false);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it(`a list of 20,000 tools is refused with 422 naming the limit (${MAX_CHECK_TOOLS}); a run over 40,000 calls keeps health reads within 1 s`, async () => {
    const steps = Array.from({ length: 40_000 }, (_, i) => ({ tool_call: { name: i % 1000 === 999 ? "b" : "a", arguments: {} } }));
    const datasetId = await importDataset("many calls", [{ name: "agent", messages: [{ role: "user", content: "go" }, { role: "assistant", content: "done", steps }] }]);
    const tools = [...Array<string>(19_999).fill("a"), "b"];
    const refused = await createMetric({ dataset_id: datasetId, name: "seq", kind: "check", evaluation_level: "conversation", check: { type: "tool_sequence", params: { tools, contiguous: true } } });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.json.error)).toContain(`name at most ${MAX_CHECK_TOOLS} tools`);

    const bounded = [...Array<string>(MAX_CHECK_TOOLS - 1).fill("a"), "b"];
    const saved = await createMetric({ dataset_id: datasetId, name: "seq", kind: "check", evaluation_level: "conversation", check: { type: "tool_sequence", params: { tools: bounded, contiguous: true } } });
    expect(saved.status).toBe(201);
    const seen = await whileReadingHealth(() => runAll(datasetId));
    expect(seen.result.map((r) => r.status)).toEqual(["completed"]);
    expect(seen.result[0].result?.value).toBe(true);
    expect(seen.failedReads).toBe(0);
    expect(seen.slowestReadMs).toBeLessThan(healthReadBoundMs(seen));
  }, 60_000);
});

describe("a metric's output_schema has the limits a check's schema has", () => {
  it("a 148 KB output_schema is refused with 422 naming 32 KB, without a judge call; a small one is saved", async () => {
    const datasetId = await importDataset("schema", [{ name: "c", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] }]);
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 2600; i++) properties[`p${i}`] = { type: "string", pattern: `^[a-z]{0,40}x${i}$` };
    expect(JSON.stringify({ type: "object", properties }).length).toBeGreaterThan(140_000);
    const base = { dataset_id: datasetId, name: "json verdict", evaluation_level: "conversation", prompt: "Rate it. @HISTORY", output_type: "json" };
    const seen = await whileReadingHealth(() => createMetric({ ...base, output_schema: { type: "object", properties } }));
    expect(seen.result.status).toBe(422);
    expect(seen.result.json.error.message).toContain("larger than 32 KB");
    expect(seen.result.json.error.details).toEqual([{ path: "output_schema", message: "the schema is larger than 32 KB (as JSON)" }]);
    expect(seen.failedReads).toBe(0);
    expect(seen.slowestReadMs).toBeLessThan(healthReadBoundMs(seen));

    const many: Record<string, unknown> = {};
    for (let i = 0; i < 101; i++) many[`p${i}`] = { type: "string", pattern: `a${i}` };
    const patterns = await createMetric({ ...base, output_schema: { type: "object", properties: many } });
    expect(patterns.status).toBe(422);
    expect(patterns.json.error.details[0].message).toBe("the schema has 101 patterns, more than 100");

    const fine = await createMetric({ ...base, output_schema: { type: "object", properties: { score: { type: "number" } } } });
    expect(fine.status).toBe(201);
    expect(double().stats().count).toBe(0);
  });
});

describe("an LLM metric over text longer than the judge's context", () => {
  it("a 20 MB message: the cell fails naming JUDGE_CONTEXT_TOKENS and no call is made; the short one is judged; health reads within 1 s", async () => {
    const datasetId = await importDataset("huge message", [
      { name: "huge", messages: [{ role: "user", content: "go" }, { role: "assistant", content: "z".repeat(20 * 1024 * 1024) }] },
      { name: "short", messages: [{ role: "user", content: "go" }, { role: "assistant", content: "a short reply" }] },
    ]);
    const metric = await createMetric({ dataset_id: datasetId, name: "helpful", evaluation_level: "message", prompt: "Is the reply helpful?", output_type: "checkbox" });
    expect(metric.status).toBe(201);
    const seen = await whileReadingHealth(() => runAll(datasetId));
    const failed = seen.result.filter((r) => r.status === "failed");
    expect(failed).toHaveLength(1);
    expect(failed[0].error).toMatch(/^prompt too long for the judge: 20,9\d\d,\d{3} characters, more than the context of '[^']+', 128,000 tokens \(about 384,000 characters; JUDGE_CONTEXT_TOKENS/);
    expect(failed[0].error).toContain("no call was made");
    expect(seen.result.filter((r) => r.status === "completed")).toHaveLength(1);
    // One call: the short message's. Before, the huge one went out whole, four attempts.
    expect(double().stats().count).toBe(1);
    expect(seen.failedReads).toBe(0);
    expect(seen.slowestReadMs).toBeLessThan(healthReadBoundMs(seen));
  }, 60_000);
});
