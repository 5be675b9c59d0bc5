/**
 * The body of a queue worker process (`npm run worker`, and the test workers): start the queue, work
 * cell batches with the given handler, and on SIGTERM/SIGINT stop taking jobs, let running batches
 * finish for SHUTDOWN_GRACE_MS, return the rest to the queue, close the connections and exit 0.
 */
import "server-only";
import { getConfig } from "@/lib/config";
import { exitByDeadline } from "@/lib/exit-deadline";
import { log } from "@/lib/log";
import { closeNotifiers } from "@/lib/cluster/notify";
import { closeClusterPools } from "@/lib/cluster/pool";
import { startQueue, stopQueue, workCells, type CellHandler } from "./cell-queue";

export type WorkerOptions = {
  concurrency?: number;
  visibilityTimeoutSeconds?: number;
  pollIntervalMs?: number;
  /** Other work of the process to stop within the same grace period (the generations it holds, given back). */
  drainAlso?: (graceMs: number) => Promise<unknown>;
};

/** Run until a stop signal; resolves once started. */
export async function runWorker(handler: CellHandler, options: WorkerOptions = {}): Promise<void> {
  const config = getConfig();
  if (!config.DATABASE_URL) {
    throw new Error("DATABASE_URL is not set: workers pull cells from the PostgreSQL job queue (postgres://…)");
  }
  const concurrency = options.concurrency ?? config.WORKER_CONCURRENCY;
  await startQueue(config.DATABASE_URL, {
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds,
    pollIntervalMs: options.pollIntervalMs,
  });
  workCells(handler, { concurrency });
  log.info("worker started", { pid: process.pid, concurrency });

  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info("worker stopping", { signal, grace_ms: config.SHUTDOWN_GRACE_MS });
    exitByDeadline(config.SHUTDOWN_GRACE_MS, "worker shutdown");
    Promise.all([stopQueue({ graceMs: config.SHUTDOWN_GRACE_MS }), options.drainAlso?.(config.SHUTDOWN_GRACE_MS)])
      .then(() => Promise.all([closeNotifiers(), closeClusterPools()]))
      .then(() => {
        log.info("worker stopped", { pid: process.pid });
        process.exit(0);
      })
      .catch((err: unknown) => {
        log.error("worker stop failed", { err });
        process.exit(1);
      });
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}
