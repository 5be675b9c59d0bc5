/**
 * A worker process for lib/generation/cluster.test.ts: what `npm run worker` starts for generations
 * (startGenerationQueue), saying on stdout, as JSON lines, when it is ready. The test bundles it with
 * esbuild and runs `node --conditions=react-server <bundle>` with DATABASE_URL and
 * JOB_VISIBILITY_TIMEOUT_SECONDS set; SIGTERM gives its generations back, as the worker's does.
 */
import { drainGenerations, startGenerationQueue } from "@/lib/generation/queue";

const name = process.env.WORKER_NAME ?? `worker-${process.pid}`;
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ worker: name, pid: process.pid, ...event })}\n`);

process.on("SIGTERM", () => {
  void drainGenerations(5_000).then(() => process.exit(0));
});

startGenerationQueue()
  .then(() => say({ event: "ready" }))
  .catch((err: unknown) => {
    say({ event: "error", message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    process.exit(1);
  });
