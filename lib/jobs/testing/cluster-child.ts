/**
 * A separate Node process for lib/jobs/cluster.test.ts: the tests start several of these against
 * one throwaway PostgreSQL test server to see the queue, the semaphore and notify work across processes.
 * The test bundles it with esbuild and runs `node --conditions=react-server <bundle> <mode>` (by hand:
 * `node --conditions=react-server --import tsx lib/jobs/testing/cluster-child.ts <mode>`) with
 * DATABASE_URL set. It reports on stdout as JSON lines.
 *
 *   queue       works cell batches through runWorker(); each cell is an integer item, recorded in
 *               test_handled(item, worker, job_id) one at a time. HANG_AFTER=<n>: after recording n
 *               items of its first batch the handler hangs (to be SIGKILLed or SIGTERMed mid-batch).
 *               GATED=1: loads, says "loaded", and starts working only when a line arrives on stdin.
 *   semaphore   SEM_ACQUIRERS acquirers × SEM_ROUNDS rounds of acquire(SEM_KEY, SEM_LIMIT), each
 *               holding SEM_HOLD_MS and counting holders in test_sem_probe to observe the maximum;
 *               starts when a line arrives on stdin.
 *   sem-hold    acquires SEM_KEY (limit 1, lease SEM_LEASE_MS), says so, and hangs until killed.
 *   echo        subscribes to "test_ping" and publishes every payload back on "test_pong".
 */
import pg from "pg";
import { getNotifier } from "@/lib/cluster/notify";
import { acquire, semaphoreTries } from "@/lib/jobs/semaphore";
import { runWorker } from "@/lib/jobs/worker";

const url = process.env.DATABASE_URL;
if (!url) throw new Error("DATABASE_URL is required");
const name = process.env.WORKER_NAME ?? `child-${process.pid}`;
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ worker: name, ...event })}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const num = (key: string, fallback: number) => (process.env[key] ? Number(process.env[key]) : fallback);

/** With GATED=1, wait for a line on stdin: the test starts the process early (loading takes seconds) and lets it work later. */
async function gate(): Promise<void> {
  if (!process.env.GATED) return;
  say({ event: "loaded" });
  await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
}

async function queueMode(): Promise<void> {
  await gate();
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const itemDelayMs = num("ITEM_DELAY_MS", 0);
  let hangAfter = process.env.HANG_AFTER ? Number(process.env.HANG_AFTER) : null;
  await runWorker(
    async (job, signal) => {
      say({ event: "start", jobId: job.jobId, executionId: job.executionId, attempt: job.attempt, items: job.cells });
      let recorded = 0;
      for (const cell of job.cells) {
        signal.throwIfAborted();
        if (hangAfter !== null && recorded === hangAfter) {
          hangAfter = null;
          say({ event: "hanging", jobId: job.jobId });
          // Ignores the signal on purpose: a stuck judge call.
          await new Promise(() => undefined);
        }
        await pool.query("insert into test_handled (item, worker, job_id, execution_id) values ($1, $2, $3, $4)", [
          cell,
          name,
          job.jobId,
          job.executionId,
        ]);
        recorded++;
        if (itemDelayMs) await sleep(itemDelayMs);
      }
      say({ event: "done", jobId: job.jobId });
    },
    { concurrency: num("WORKER_CONCURRENCY", 3), visibilityTimeoutSeconds: num("VISIBILITY_SECONDS", 60), pollIntervalMs: 500 },
  );
  say({ event: "ready" });
}

async function semaphoreMode(): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const key = process.env.SEM_KEY ?? "test";
  const limit = num("SEM_LIMIT", 4);
  const rounds = num("SEM_ROUNDS", 5);
  const holdMs = num("SEM_HOLD_MS", 30);
  // Line up with the other processes so they all contend from the start: go when the test says so.
  say({ event: "ready" });
  await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
  const waits: number[] = [];
  await Promise.all(
    Array.from({ length: num("SEM_ACQUIRERS", 10) }, async (_, index) => {
      for (let round = 0; round < rounds; round++) {
        const asked = Date.now();
        const release = await acquire(key, limit, { leaseMs: 5_000, url });
        waits.push(Date.now() - asked);
        await pool.query("update test_sem_probe set current = current + 1, peak = greatest(peak, current + 1), total = total + 1 where key = $1", [key]);
        await sleep(holdMs);
        await pool.query("update test_sem_probe set current = current - 1 where key = $1", [key]);
        await release();
        say({ event: "round", acquirer: index, round });
      }
    }),
  );
  say({ event: "finished", maxWaitMs: Math.max(...waits), tries: semaphoreTries() });
  await pool.end();
  process.exit(0);
}

async function semHoldMode(): Promise<void> {
  await acquire(process.env.SEM_KEY ?? "hold", 1, { leaseMs: num("SEM_LEASE_MS", 1_500), url });
  say({ event: "held" });
  setInterval(() => undefined, 1 << 30);
}

async function echoMode(): Promise<void> {
  const notifier = getNotifier(url);
  await notifier.subscribe("test_ping", (payload) => {
    notifier.publish("test_pong", { echo: payload as string, from: process.pid }).catch((err: unknown) => say({ event: "error", message: String(err) }));
  });
  say({ event: "ready" });
  setInterval(() => undefined, 1 << 30);
}

const modes: Record<string, () => Promise<void>> = { queue: queueMode, semaphore: semaphoreMode, "sem-hold": semHoldMode, echo: echoMode };
const mode = modes[process.argv[2] ?? ""];
if (!mode) throw new Error(`unknown mode ${process.argv[2]}`);
mode().catch((err: unknown) => {
  say({ event: "error", message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  process.exit(1);
});
