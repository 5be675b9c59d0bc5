/**
 * An in-process run is a lib/jobs job: while it works, its lease is renewed (every third of
 * JOB_VISIBILITY_TIMEOUT_SECONDS), and a renewal that finds the run ended by someone else — a sweep, an
 * operator's update, another server on the same file — stops its judge calls instead of letting it call
 * on to the end with every write refused. (PostgreSQL: runs are queued batches, whose leases are the queue's.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import { getExecutionRow, updateExecution } from "@/db/repositories/executions";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { seedMessageCells } from "@/lib/testing/seed/rows";
import { waitForExecution } from "./run";

const queued = Boolean(process.env.DATABASE_URL);

let double: JudgeDouble;
beforeAll(async () => {
  double = await startJudgeDouble();
  // A 3 s lease: renewed every second.
  Object.assign(process.env, { OPENAI_BASE_URL: double.baseURL, JUDGE_MAX_RETRIES: "0", JUDGE_HEDGE: "false", JOB_VISIBILITY_TIMEOUT_SECONDS: "3" });
  resetConfig();
});
afterAll(async () => {
  for (const key of ["OPENAI_BASE_URL", "JUDGE_MAX_RETRIES", "JUDGE_HEDGE", "JOB_VISIBILITY_TIMEOUT_SECONDS"]) delete process.env[key];
  resetConfig();
  await double.close();
});

describe.skipIf(queued)("an in-process run's lease", () => {
  it("stops the run's calls at its next renewal once the run was ended elsewhere, writing nothing more", async () => {
    const { datasetId, metricId } = await seedMessageCells(200, "ended elsewhere");
    double.setLatency(100);
    const started = await call(run.POST, "POST", "/run", { body: { dataset_id: datasetId, pipeline_node_id: metricId, execution_mode: "async", batch_size: 2, no_cache: true } });
    expect(started.status).toBe(202);
    const id = started.json.id as number;
    await expect.poll(() => double.count(), { timeout: 15_000 }).toBeGreaterThan(2);
    // Ended by someone else: the row says failed, nothing told this process.
    await updateExecution(id, { status: "failed", completedAt: new Date().toISOString() }, { onlyIfActive: true });
    const endedAt = Date.now();
    // At 100 ms a call and two at once, the 200 cells take 10 s; the next renewal (within 1 s) stops them.
    await waitForExecution(id);
    expect(Date.now() - endedAt).toBeLessThan(3_000);
    // Judge calls go out from a thread: one written to the socket as the abort came may reach the double just
    // after the run's work ended. Once the double has heard every request close, none may follow.
    await expect.poll(() => double.inFlight(), { timeout: 10_000 }).toBe(0);
    const calls = double.count();
    await new Promise((r) => setTimeout(r, 500));
    expect(double.count()).toBe(calls);
    expect(calls).toBeLessThan(100);
    // The row keeps what the other writer wrote.
    expect((await getExecutionRow(id))!.status).toBe("failed");
  });
});
