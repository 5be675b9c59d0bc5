import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import { getExecutionRow } from "@/db/repositories/executions";
import { listResultRows } from "@/db/repositories/evaluation-results";
import { resetConfig } from "@/lib/config";
import { createMetric } from "@/lib/metrics";
import { call } from "@/lib/testing/http/call";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { loadSampleDataset } from "@/lib/testing/seed/sample";
import { startClusterRunner } from "./cluster-run";
import { drainRuns, resumeAfterDrain, waitForExecution } from "./run";

/** PostgreSQL: runs are queued jobs that outlive the process working them (cluster-run.ts). */
const queued = Boolean(process.env.DATABASE_URL);

let double: JudgeDouble;
beforeAll(async () => {
  double = await startJudgeDouble();
  process.env.OPENAI_BASE_URL = double.baseURL;
  process.env.JUDGE_MAX_RETRIES = "0";
  // No hedges: a hanging call must stay in flight until the grace period ends. With them, once the
  // first test has taught the model's p95, the hung call's hedge answers and the cell is no longer in
  // flight to abort (hedges have tests of their own: lib/judge/tail.test.ts, faulty-provider.test.ts).
  process.env.JUDGE_HEDGE = "false";
  // Nor a time limit learnt from the fast calls before it (floor 1 s): it would end the hung call before
  // the 2 s grace period does. The learnt limit has tests of its own (lib/judge/tail.test.ts).
  process.env.JUDGE_TIMEOUT_FLOOR_MS = "30000";
  resetConfig();
});
afterAll(async () => {
  resumeAfterDrain();
  delete process.env.OPENAI_BASE_URL;
  delete process.env.JUDGE_HEDGE;
  delete process.env.JUDGE_TIMEOUT_FLOOR_MS;
  resetConfig();
  await double.close();
});

describe.skipIf(queued)("graceful shutdown", () => {
  it("stops taking work, lets cells in flight finish, and leaves the rest for a retry", async () => {
    const sample = await loadSampleDataset();
    const step = (await createMetric({ dataset_id: sample.datasetId, name: "s", evaluation_level: "step", prompt: "Judge @CURRENT_STEP.tool_call #@STEP_NUMBER", output_type: "progress" })).id;
    double.setLatency(150);
    const started = await call(run.POST, "POST", "/run", { body: { dataset_id: sample.datasetId, pipeline_node_id: step, execution_mode: "async", batch_size: 2 } });
    const id = started.json.id;
    await expect.poll(() => double.inFlight(), { timeout: 15_000 }).toBe(2);

    // The run prepares the next cells while its 2 calls are out: none of them may start its call after
    // the drain began.
    const sentBeforeDrain = double.count();
    const drained = await drainRuns(2_000);
    expect(drained).toEqual({ finished: 1, aborted: 0 });
    await waitForExecution(id);
    expect(double.count()).toBe(sentBeforeDrain);
    const row = (await getExecutionRow(id))!;
    const saved = (await listResultRows(id)).length;
    expect(saved).toBeGreaterThan(0); // the cells in flight finished and were saved
    expect(saved).toBeLessThan(21);
    expect(row.status).toBe("failed");
    expect((row.errors as Array<{ message: string }>).at(-1)!.message).toBe("interrupted: server shutting down");
    expect(row.successfulEvaluations + row.failedEvaluations).toBe(saved);

    const refused = await call(run.POST, "POST", "/run", { body: { dataset_id: sample.datasetId } });
    expect(refused.status).toBe(503);
    expect(refused.json.error.code).toBe("unavailable");

    resumeAfterDrain();
    double.setLatency(0);
    const retry = await call(run.POST, "POST", "/run", { body: { dataset_id: sample.datasetId, pipeline_node_id: step, retry: true, execution_mode: "async" } });
    expect(retry.json.total_evaluations).toBe(21 - row.successfulEvaluations);
    await waitForExecution(retry.json.id);
    expect((await getExecutionRow(retry.json.id))!.status).toBe("completed");
  });

  it("aborts cells still in flight when the grace period ends", async () => {
    const sample = await loadSampleDataset();
    const conv = (await createMetric({ dataset_id: sample.datasetId, name: "c", evaluation_level: "conversation", prompt: "Rate @HISTORY", output_type: "progress" })).id;
    double.setLatency(0);
    double.enqueue({ kind: "hang" });
    const started = await call(run.POST, "POST", "/run", { body: { dataset_id: sample.datasetId, pipeline_node_id: conv } });
    await expect.poll(() => double.inFlight(), { timeout: 15_000 }).toBe(1);
    const graceMs = 2_000;
    const drainStarted = Date.now();
    const drained = await drainRuns(graceMs);
    // One grace period, not two (the queue's worker used to get a second one of its own after it).
    expect(Date.now() - drainStarted).toBeLessThan(graceMs * 1.75);
    expect(drained.aborted).toBe(1);
    await waitForExecution(started.json.id);
    expect((await getExecutionRow(started.json.id))!.status).toBe("failed");
    expect(await listResultRows(started.json.id)).toHaveLength(0);
    await expect.poll(() => double.inFlight()).toBe(0);
    resumeAfterDrain();
  });
});

describe.skipIf(!queued)("graceful shutdown with queued runs (PostgreSQL)", () => {
  it("stops taking work and gives unfinished batches back to the queue: nothing fails, and the run completes once a process works again", async () => {
    const sample = await loadSampleDataset();
    const step = (await createMetric({ dataset_id: sample.datasetId, name: "s", evaluation_level: "step", prompt: "Judge @CURRENT_STEP.tool_call #@STEP_NUMBER", output_type: "progress" })).id;
    double.setLatency(150);
    const started = await call(run.POST, "POST", "/run", { body: { dataset_id: sample.datasetId, pipeline_node_id: step, execution_mode: "async", batch_size: 2 } });
    const id = started.json.id;
    await expect.poll(() => double.inFlight(), { timeout: 15_000 }).toBeGreaterThan(0);

    const drained = await drainRuns(100);
    expect(drained.aborted).toBeGreaterThan(0); // batches still running when the grace period ended went back
    await expect.poll(() => double.inFlight()).toBe(0);
    const row = (await getExecutionRow(id))!;
    const saved = (await listResultRows(id)).length;
    expect(saved).toBeLessThan(21);
    // Not interrupted: another process (here, this one again) takes the batches up.
    expect(row.status).toBe("processing");
    expect(row.errors).toEqual([]);
    expect(row.successfulEvaluations + row.failedEvaluations).toBe(saved);

    const refused = await call(run.POST, "POST", "/run", { body: { dataset_id: sample.datasetId } });
    expect(refused.status).toBe(503);

    resumeAfterDrain();
    double.setLatency(0);
    await startClusterRunner();
    await waitForExecution(id);
    const done = (await getExecutionRow(id))!;
    expect(done).toMatchObject({ status: "completed", successfulEvaluations: 21, failedEvaluations: 0 });
    const rows = await listResultRows(id);
    expect(rows).toHaveLength(21);
    expect(new Set(rows.map((r) => r.entityId)).size).toBe(21);
  });

  it("aborts a hanging call when the grace period ends; its cell is evaluated again later, once", async () => {
    const sample = await loadSampleDataset();
    const conv = (await createMetric({ dataset_id: sample.datasetId, name: "c", evaluation_level: "conversation", prompt: "Rate @HISTORY", output_type: "progress" })).id;
    double.setLatency(0);
    double.enqueue({ kind: "hang" });
    const started = await call(run.POST, "POST", "/run", { body: { dataset_id: sample.datasetId, pipeline_node_id: conv } });
    await expect.poll(() => double.inFlight(), { timeout: 15_000 }).toBe(1);
    const graceMs = 2_000;
    const drainStarted = Date.now();
    const drained = await drainRuns(graceMs);
    // One grace period, not two (the queue's worker used to get a second one of its own after it).
    expect(Date.now() - drainStarted).toBeLessThan(graceMs * 1.75);
    expect(drained.aborted).toBe(1);
    await expect.poll(() => double.inFlight()).toBe(0);
    expect((await getExecutionRow(started.json.id))!.status).toBe("processing");
    resumeAfterDrain();
    await startClusterRunner();
    await waitForExecution(started.json.id);
    expect((await getExecutionRow(started.json.id))!).toMatchObject({ status: "completed", successfulEvaluations: 5 });
    expect(await listResultRows(started.json.id)).toHaveLength(5);
  });
});
