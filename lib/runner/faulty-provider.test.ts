/**
 * A run through the routes against a provider that refuses, errors, hangs and garbles (the judge test
 * double's fault mix), with the default judge settings: every cell ends final, each failed one with its
 * reason; hung calls are hedged or time out at the learnt limit rather than holding the run.
 */
import { describe, expect, it } from "vitest";
import * as item from "@/app/api/evaluation-pipeline-executions/[id]/route";
import * as results from "@/app/api/evaluation-pipeline-executions/[id]/results/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import { createMetric } from "@/lib/metrics";
import { call } from "@/lib/testing/http/call";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import { loadSampleDataset } from "@/lib/testing/seed/sample";
import { waitForExecution } from "./run";

const judgeDouble = withJudgeDouble();

describe("a run under a faulty provider", () => {
  it("ends every cell final, each failed one with its reason, with bounded retries", { timeout: 120_000 }, async () => {
    const double = judgeDouble();
    const sample = await loadSampleDataset();
    const base = { dataset_id: sample.datasetId, output_type: "progress" as const };
    for (const [name, level, prompt] of [
      ["Goal", "conversation", "Did the assistant achieve @GOAL?\n@HISTORY"],
      ["Helpful", "message", "Is @CURRENT_MESSAGE.output helpful?"],
      ["Tool", "step", "Judge step @STEP_NUMBER: @CURRENT_STEP.tool_call"],
    ] as const) {
      await createMetric({ ...base, name, evaluation_level: level, prompt });
    }
    double.setLatency({ min: 5, max: 25 });
    double.setFaults({ rate_limit: 0.2, server_error: 0.1, hang: 0.05, malformed: 0.05 }, 3);
    const started = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", {
      body: { dataset_id: sample.datasetId, execution_mode: "async", batch_size: 8 },
    });
    expect(started.status).toBe(202);
    const id = started.json.id as number;
    await waitForExecution(id);
    const done = (await call(item.GET, "GET", `/x/${id}`, { params: { id } })).json;
    const stats = double.stats();
    double.setFaults(null);
    // Every hung request is closed by the judge (hedge won, or timed out) — heard here just after the run ends.
    await expect.poll(() => double.inFlight(), { timeout: 30_000 }).toBe(0);
    const hung = double.requests.filter((r) => r.behaviour === "hang");

    // The faults happened: refusals, errors, garbled replies and hung calls.
    expect(stats.byKind.rate_limit).toBeGreaterThan(0);
    expect(stats.byKind.server_error).toBeGreaterThan(0);
    expect(stats.byKind.malformed).toBeGreaterThan(0);
    expect(stats.byKind.hang).toBeGreaterThan(0);

    expect(["completed", "failed"]).toContain(done.status);
    expect(done.successful_evaluations + done.failed_evaluations).toBe(35);
    const rows = (await call(results.GET, "GET", `/x/${id}/results`, { params: { id } })).json.results as Array<{ status: string; error: string | null; execution_time: number | null }>;
    expect(rows).toHaveLength(35);
    for (const row of rows) {
      expect(["completed", "failed"]).toContain(row.status);
      if (row.status === "failed") {
        expect(row.error).toMatch(/^(judge rate limited \(429\) after 4 attempts|judge server error \(500\) after 4 attempts|judge call timed out after \d+ ms|invalid judge output: )/);
      }
    }
    // Most cells make it through the faults (retries, the repair attempt, hedges).
    expect(done.successful_evaluations).toBeGreaterThan(25);
    // No hung call waited out the fixed 30 s JUDGE_TIMEOUT_MS: the hang was hedged past the provider's
    // p95 (the hedge's answer aborts it), or timed out at the limit learnt from its latency (≥
    // JUDGE_TIMEOUT_FLOOR_MS, 1 s). Measured on the hung requests themselves, from arrival to the judge
    // closing them: a cell's execution_time also holds its retries' backoffs and Retry-After waits, and
    // under load (at 20–37 on two cores) a cell with several of them took 37.7 s without any call held 30 s.
    expect(hung.length).toBeGreaterThan(0);
    const heldMs = hung.map((r) => (r.closedAt === null ? Infinity : Date.parse(r.closedAt) - Date.parse(r.at)));
    expect(Math.max(...heldMs)).toBeLessThan(30_000);
    // Hedges are counted in meta (a queued PostgreSQL run's once one was sent: its processes add them up).
    if (!process.env.DATABASE_URL) expect(typeof done.meta.hedges).toBe("number");
  });
});
