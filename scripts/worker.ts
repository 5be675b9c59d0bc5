/**
 * `npm run worker`: a process without HTTP that pulls cell batches from the PostgreSQL job queue
 * (DATABASE_URL) and evaluates them, next to any number of servers and other workers.
 * SIGTERM stops it cleanly: no new batches, running ones finish within SHUTDOWN_GRACE_MS or go back.
 */
import { log } from "@/lib/log";
import { runWorker } from "@/lib/cluster/worker";
import type { CellHandler } from "@/lib/cluster/queue";

// The runner (lib/runner) provides the real handler; until it is connected the worker refuses to take
// jobs rather than failing them.
const handler: CellHandler | null = null;

async function main(): Promise<void> {
  if (!handler) {
    log.error("the queue worker is not connected to the runner yet: no handler for cell batches");
    process.exit(2);
  }
  await runWorker(handler);
}

main().catch((err: unknown) => {
  log.error("worker failed to start", { err });
  process.exit(1);
});
