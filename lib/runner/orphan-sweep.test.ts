/**
 * The orphan sweep of queued runs (PostgreSQL; skipped, saying so, on SQLite): a run none of whose
 * batches any process has any more — the last attempt of a batch lost with its process, or a wave
 * claimed but never enqueued — used to stay `processing` until some server restarted. Each server now
 * looks every half lease (lib/jobs) and fails such a run, once it has been seen so twice in a row. The test process
 * only enqueues (it works no batch), so the run's batches stay where the test puts them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as item from "@/app/api/evaluation-pipeline-executions/[id]/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import { getExecutionRow, markExecutionProcessing } from "@/db/repositories/executions";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { seedMessageCells } from "@/lib/testing/seed/rows";
import { pgResult } from "@/lib/testing/setup/pg-query";
import { enqueueOnly, ORPHANED_MESSAGE, orphanSweep } from "./cluster-run";

const url = process.env.DATABASE_URL ?? "";
const queued = url.startsWith("postgres");
const title = queued ? "the orphan sweep of queued runs" : "the orphan sweep of queued runs — SKIPPED: PostgreSQL only (TEST_STORE=postgres)";

const sql = (text: string, values: unknown[] = []) => pgResult(url, text, values);

async function startedRun(cells: number): Promise<number> {
  const { datasetId } = await seedMessageCells(cells, `orphans ${cells}`);
  const res = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", { body: { dataset_id: datasetId, execution_mode: "async", batch_size: 4 } });
  expect(res.status).toBe(202);
  const id = res.json.id as number;
  // As a worker does when it takes the run's first batch (a pending run gets a minute's grace).
  await markExecutionProcessing(id, new Date().toISOString());
  return id;
}

describe.skipIf(!queued)(title, () => {
  beforeAll(() => {
    enqueueOnly();
    // Never called: no process here works a batch.
    Object.assign(process.env, { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    resetConfig();
  });
  afterAll(() => {
    delete process.env.OPENAI_BASE_URL;
    resetConfig();
  });

  it("fails a run whose batches are all gone on the second sweep in a row, with the reason, and leaves a live run alone", async () => {
    const orphan = await startedRun(12);
    const live = await startedRun(6);
    // The queue gave up the orphan's batches (their last attempts were lost); the live run's are queued.
    const lost = await sql("UPDATE pgboss.job SET state = 'failed' WHERE data->>'executionId' = $1 AND state < 'active'", [String(orphan)]);
    expect(lost.rowCount).toBeGreaterThan(0);

    // First sighting: not yet (a wave between its claim and its enqueue looks the same for a moment).
    expect(await orphanSweep()).toEqual([]);
    expect((await getExecutionRow(orphan))!.status).toBe("processing");

    expect(await orphanSweep()).toEqual([orphan]);
    const ended = (await call(item.GET, "GET", "/x", { params: { id: orphan } })).json;
    expect(ended).toMatchObject({ status: "failed", total_evaluations: 12, successful_evaluations: 0, failed_evaluations: 0, skipped_evaluations: 12 });
    expect(JSON.stringify(ended.errors)).toContain(ORPHANED_MESSAGE);

    // The live run, with its batches queued, survives any number of sweeps.
    expect(await orphanSweep()).toEqual([]);
    expect((await getExecutionRow(live))!.status).toBe("processing");
  });
});
