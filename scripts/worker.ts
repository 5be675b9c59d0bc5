/**
 * `npm run worker`: a process without HTTP that pulls cell batches of queued runs from the PostgreSQL
 * job queue (DATABASE_URL) and evaluates them (lib/runner/cluster-run.ts), and claims queued
 * generations (lib/generation/queue.ts), next to any number of servers and other workers.
 * WORKER_CONCURRENCY batches and generations at once. SIGTERM stops it cleanly: no new batches or
 * generations, running ones finish within SHUTDOWN_GRACE_MS or go back to the queue.
 */
import { log } from "@/lib/log";
import { runWorker } from "@/lib/jobs/worker";
import { handleCellBatch } from "@/lib/runner/cluster-run";
import { drainGenerations, startGenerationQueue } from "@/lib/generation/queue";
import { startEvaluationExport } from "@/lib/otel/export";

runWorker(handleCellBatch, { drainAlso: drainGenerations })
  .then(() => startGenerationQueue())
  // The cells this worker saves go back onto their traces too (OTEL_EVALUATION_ENDPOINT).
  .then(() => startEvaluationExport())
  .catch((err: unknown) => {
    log.error("worker failed to start", { err });
    process.exit(1);
  });
