/**
 * A queue worker process for lib/runner/cluster-run.test.ts: `npm run worker`'s body (runWorker with
 * the runner's batch handler) that also reports on stdout, as JSON lines, when it is ready and each
 * batch it starts and ends, so the test can kill it mid-batch. The test bundles it with esbuild and runs
 * `node --conditions=react-server <bundle>` with DATABASE_URL, OPENAI_BASE_URL (the judge test double),
 * JUDGE_MODEL (tells its results apart), WORKER_CONCURRENCY and JOB_VISIBILITY_TIMEOUT_SECONDS set.
 */
import { runWorker } from "@/lib/jobs/worker";
import { handleCellBatch } from "@/lib/runner/cluster-run";

const name = process.env.WORKER_NAME ?? `worker-${process.pid}`;
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ worker: name, ...event })}\n`);

runWorker(
  async (job, signal) => {
    say({ event: "batch", jobId: job.jobId, executionId: job.executionId, cells: job.cells.length, attempt: job.attempt });
    await handleCellBatch(job, signal);
    say({ event: "batch-done", jobId: job.jobId, aborted: signal.aborted });
  },
  { pollIntervalMs: 500 },
)
  .then(() => say({ event: "ready" }))
  .catch((err: unknown) => {
    say({ event: "error", message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    process.exit(1);
  });
