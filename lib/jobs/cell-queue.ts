/**
 * The job queue of the PostgreSQL store (lib/jobs): a run's cells are enqueued as batches (one pg-boss job
 * per batch) in the same database, and every server process and `npm run worker` process works them. The
 * queue is a lib/jobs claim queue (claims.ts: the claim loop, capacity, one heartbeat renewing every claim
 * of the process, abort signals, cancel over NOTIFY, wake-ups, drain); what is written here is what is
 * pg-boss's: its table is the claim store.
 *
 * What pg-boss 10 gives us (checked in node_modules/pg-boss/src): jobs live in pgboss.job (partitioned
 * per queue); fetch() claims with `FOR UPDATE SKIP LOCKED` and marks the job `active`, so N processes
 * never claim one job twice; fail() puts a job back in `retry` until retry_count reaches retry_limit;
 * its maintenance (one process of the cluster per maintenanceIntervalSeconds, default 120 s, gated by
 * pgboss.version.maintained_on) fails every `active` job whose `started_on + expire_in` has passed,
 * which returns it to `retry` — that is the visibility timeout, and the claim queue's "lost claim". Schema
 * creation on start() runs under an advisory lock and tolerates a concurrent creator; createQueue() is DDL
 * that can deadlock with other sessions, so processes set up one at a time under an advisory lock of ours.
 *
 * What we add: claims fetched as soon as a slot frees (pg-boss's work() sleeps a full polling interval
 * between jobs); a renewal that moves `started_on` forward every third of the visibility timeout, so a live
 * process keeps a long batch while a dead one loses it after the timeout; a claim's key is (job id,
 * retry_count), so a process whose lease ran out cannot complete or fail the attempt another process (or
 * itself, again) now holds; a batch given back at shutdown without spending an attempt.
 *
 * Recovery time after a process dies: the visibility timeout T, then up to two maintenance intervals
 * (set to T/4, at least 1 s: a process's timer may fire just before the cluster-wide gate opens) before
 * maintenance sees it, then pg-boss's retry delay (1 s) and one idle poll (2 s) — at most ~1.5 × T + 3 s.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import PgBoss from "pg-boss";
import { z } from "zod";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { sessionClient } from "@/lib/pg-session";
import { processSingleton } from "@/lib/process-state";
import { getNotifier } from "@/lib/cluster/notify";
import { clusterPool, clusterTransaction, clusterUrl } from "@/lib/cluster/pool";
import { defineClaimQueue, type ClaimContext, type ClaimStore } from "./claims";
import { releaseAllHeld } from "./semaphore";

export const cellQueueName = "turnscope-cells";
/** pg-boss's schema: its default, named here because the heartbeat and the counts read its table. */
const bossSchema = "pgboss";
const wakeChannel = "turnscope_queue_wake";
const cancelChannel = "turnscope_queue_cancel";
/** Attempts after the first before a batch is given up (`failed`): handler throws and expired leases both count. */
export const defaultRetryLimit = 3;
/** Pause before a batch whose handler threw is offered again. */
const retryDelaySeconds = 1;
/** Serialises the set-up (pg-boss schema, our queue) of processes starting together. */
const setupLockKey = 7_305_771_004; // arbitrary, fixed: "turnscope queue set-up"
/** An idle process asks for work this often even without a wake-up notification. */
const defaultPollIntervalMs = 2_000;

const jobDataSchema = z.object({ executionId: z.number().int(), cells: z.array(z.unknown()) });
type CellJobData = z.infer<typeof jobDataSchema>;

export type CellJob = {
  executionId: number;
  cells: unknown[];
  /** pg-boss job id: the same across the attempts of one batch. */
  jobId: string;
  /** 1 for the first attempt; expired leases and throws both start a new one. */
  attempt: number;
  /** No attempt follows this one: if it throws (or its process dies) the batch ends `failed`. */
  finalAttempt: boolean;
};
export type CellHandler = (job: CellJob, signal: AbortSignal) => Promise<void>;

export type QueueOptions = {
  /** Seconds a claimed batch stays invisible without a heartbeat; default JOB_VISIBILITY_TIMEOUT_SECONDS. */
  visibilityTimeoutSeconds?: number;
  /** Idle poll period; default 2 s. Enqueues wake idle processes at once through NOTIFY anyway. */
  pollIntervalMs?: number;
};

type QueueState = {
  url: string;
  boss: PgBoss;
  visibilitySeconds: number;
  pollIntervalMs: number;
};

/** The process's worker: the handler its claimed batches are given to, and how many at once. */
type Worker = { handler: CellHandler; concurrency: number };

const holder = () =>
  processSingleton<{ state: QueueState | null; starting: Promise<QueueState> | null; worker: Worker | null }>("cluster.queue", () => ({
    state: null,
    starting: null,
    worker: null,
  }));

function running(): QueueState {
  const state = holder().state;
  if (!state) throw new Error("The job queue is not started: call startQueue() first");
  return state;
}

/** Maintenance (expiry of dead processes' leases) runs every quarter of the visibility timeout. */
export function maintenanceIntervalSeconds(visibilitySeconds: number): number {
  return Math.max(1, Math.floor(visibilitySeconds / 4));
}

/**
 * Start this process's queue client (pg-boss creates its schema on the first start; several processes
 * may start at once). Idempotent: a second call returns the running queue.
 */
export async function startQueue(url?: string, options: QueueOptions = {}): Promise<void> {
  const h = holder();
  if (h.state) return;
  h.starting ??= open(clusterUrl(url), options).finally(() => {
    h.starting = null;
  });
  h.state = await h.starting;
}

/** Exported for the test that starts several clients at once; use startQueue(). */
export async function openQueueClient(url: string, options: QueueOptions): Promise<{ boss: PgBoss; visibilitySeconds: number }> {
  const visibilitySeconds = options.visibilityTimeoutSeconds ?? getConfig().JOB_VISIBILITY_TIMEOUT_SECONDS;
  if (!Number.isInteger(visibilitySeconds) || visibilitySeconds < 1) {
    throw new Error(`visibility timeout must be a positive whole number of seconds, got ${visibilitySeconds}`);
  }
  const boss = new PgBoss({
    connectionString: url,
    max: 4,
    application_name: "turnscope-queue",
    schema: bossSchema,
    // No cron schedules: skips the timekeeper's polling.
    schedule: false,
    supervise: true,
    maintenanceIntervalSeconds: maintenanceIntervalSeconds(visibilitySeconds),
  });
  boss.on("error", (err) => log.warn("queue: pg-boss reported an error", { err }));
  // pg-boss's own schema creation is safe to race, but createQueue() (a partition attached to
  // pgboss.job, foreign keys to pgboss.queue) deadlocked once with another process's start or
  // maintenance when three workers started together on an empty database. So processes set up one at
  // a time, on a session of their own, only create the queue when it is missing, and retry a deadlock.
  const setup = sessionClient(url, "turnscope-queue-setup");
  await setup.connect();
  try {
    await setup.query("SELECT pg_advisory_lock($1)", [setupLockKey]);
    await boss.start();
    for (let attempt = 1; ; attempt++) {
      try {
        if (!(await boss.getQueue(cellQueueName))) {
          await boss.createQueue(cellQueueName, {
            name: cellQueueName,
            retryLimit: defaultRetryLimit,
            retryDelay: retryDelaySeconds,
            expireInSeconds: visibilitySeconds,
          });
          // Cancel and the per-execution counts find a run's jobs by executionId; the queue's
          // partition is empty now, so the index costs nothing to build.
          const { rows } = await setup.query<{ partition: string | null }>(
            `SELECT partition_name AS partition FROM ${bossSchema}.queue WHERE name = $1`,
            [cellQueueName],
          );
          const partition = rows[0]?.partition;
          if (partition) {
            await setup.query(
              `CREATE INDEX IF NOT EXISTS turnscope_cells_execution_idx ON ${bossSchema}."${partition}" ((data->>'executionId'))`,
            );
          }
        }
        break;
      } catch (err) {
        const deadlock = (err as { code?: string }).code === "40P01";
        if (!deadlock || attempt >= 3) throw err;
        log.warn("queue: deadlock while creating the queue, retrying", { attempt });
      }
    }
  } catch (err) {
    await boss.stop({ graceful: false, close: true }).catch(() => undefined);
    throw err;
  } finally {
    // Ending the session releases the lock.
    await setup.end().catch(() => undefined);
  }
  return { boss, visibilitySeconds };
}

async function open(url: string, options: QueueOptions): Promise<QueueState> {
  const { boss, visibilitySeconds } = await openQueueClient(url, options);
  return { url, boss, visibilitySeconds, pollIntervalMs: options.pollIntervalMs ?? defaultPollIntervalMs };
}

/**
 * Stop taking jobs, give running batches up to `graceMs` (default SHUTDOWN_GRACE_MS) to finish, return
 * the rest to the queue at once (they do not wait for the visibility timeout), and close the client.
 */
export async function stopQueue({ graceMs }: { graceMs?: number } = {}): Promise<void> {
  const h = holder();
  if (h.starting) await h.starting.catch(() => undefined);
  const state = h.state;
  if (!state) return;
  await stopWorker(graceMs ?? getConfig().SHUTDOWN_GRACE_MS);
  h.state = null;
  // The batches are back in line; so are the run and model slots their cells held (not after their leases).
  await releaseHeldAtStop();
  await state.boss.stop({ graceful: false, close: true });
}

/**
 * Enqueue one job per batch of cells of `executionId`, all or none; returns the job ids. Idle
 * processes are woken through NOTIFY. `retryLimit`: attempts after the first (default 3).
 *
 * Runs share the workers fairly: batch i of every run has priority -i, and pg-boss hands out the
 * highest priority first (then the oldest), so a run started while another has thousands of batches
 * queued gets its first batches next instead of waiting for the whole backlog.
 */
export async function enqueueCellBatches(
  executionId: number,
  batches: unknown[][],
  options: { retryLimit?: number } = {},
): Promise<string[]> {
  const state = running();
  if (!Number.isSafeInteger(executionId)) throw new Error(`executionId must be an integer, got ${executionId}`);
  const ids: string[] = [];
  const jobs: PgBoss.JobInsert<CellJobData>[] = batches.map((cells, index) => {
    const id = randomUUID();
    ids.push(id);
    return {
      id,
      name: cellQueueName,
      data: { executionId, cells },
      priority: -index,
      retryLimit: options.retryLimit ?? defaultRetryLimit,
      retryDelay: retryDelaySeconds,
      expireInSeconds: state.visibilitySeconds,
    };
  });
  await clusterTransaction(clusterPool(state.url), async (client) => {
    // pg-boss's insert() runs on the connection we give it, so the chunks share our transaction.
    const db = { executeSql: (text: string, values: unknown[]) => client.query(text, values) };
    // One statement per thousand jobs keeps the JSON parameter of pg-boss's insert reasonable.
    for (let i = 0; i < jobs.length; i += 1000) await state.boss.insert(jobs.slice(i, i + 1000), { db });
  });
  await getNotifier(state.url).publish(wakeChannel, executionId).catch((err) => log.warn("queue: wake-up not sent", { err }));
  return ids;
}

/**
 * Cancel every job of `executionId` not yet finished: queued ones are never handed out, and running
 * ones have their AbortSignal aborted in whichever process runs them (NOTIFY, and the heartbeat as a
 * fallback). Returns how many jobs were cancelled.
 */
export async function cancelExecutionJobs(executionId: number): Promise<number> {
  const state = running();
  const { rows } = await clusterPool(state.url).query<{ id: string }>(
    `SELECT id FROM ${bossSchema}.job WHERE name = $1 AND state < 'completed' AND data->>'executionId' = $2`,
    [cellQueueName, String(executionId)],
  );
  let cancelled = 0;
  if (rows.length > 0) {
    const result = await state.boss.cancel(cellQueueName, rows.map((r) => r.id));
    cancelled = (result as unknown as { affected?: number } | undefined)?.affected ?? rows.length;
  }
  await getNotifier(state.url).publish(cancelChannel, executionId).catch((err) => log.warn("queue: cancel not broadcast", { err }));
  return cancelled;
}

export type ExecutionJobCounts = { created: number; retry: number; active: number; completed: number; cancelled: number; failed: number };

/** Jobs of `executionId` by state: a run is done when nothing is created, retry or active. */
export async function executionJobCounts(executionId: number): Promise<ExecutionJobCounts> {
  const state = running();
  const { rows } = await clusterPool(state.url).query<{ state: keyof ExecutionJobCounts; n: number }>(
    `SELECT state::text AS state, count(*)::int AS n FROM ${bossSchema}.job
     WHERE name = $1 AND data->>'executionId' = $2 GROUP BY state`,
    [cellQueueName, String(executionId)],
  );
  const counts: ExecutionJobCounts = { created: 0, retry: 0, active: 0, completed: 0, cancelled: 0, failed: 0 };
  for (const row of rows) counts[row.state] = row.n;
  return counts;
}

/** Free every semaphore row of this process (semaphore.ts, releaseAllHeld); a failure is only logged. */
async function releaseHeldAtStop(): Promise<void> {
  await releaseAllHeld().catch((err: unknown) => log.warn("queue: could not free the semaphore slots at shutdown; their leases free them", { err }));
}

/** What stopping a worker did with the batches it was running: finished within the grace period, or given back. */
export type StopOutcome = { finished: number; aborted: number };

/**
 * Work cell batches in this process (one worker a process), up to `concurrency` at once, until stopQueue()
 * or the returned stop(). A handler that resolves completes its job; one that throws has it retried (after
 * 1 s, up to the retry limit). The signal aborts when the execution is cancelled, when this process's lease
 * on the job was lost (it stalled past the visibility timeout), or at shutdown after the grace period.
 */
export function workCells(handler: CellHandler, options: { concurrency: number }): { stop: (graceMs?: number) => Promise<StopOutcome> } {
  running();
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
    throw new Error(`concurrency must be a positive integer, got ${options.concurrency}`);
  }
  const h = holder();
  if (h.worker) throw new Error("this process already works cell batches: stop its worker first");
  const worker: Worker = { handler, concurrency: options.concurrency };
  h.worker = worker;
  cells.reopen();
  void cells.start().catch((err: unknown) => log.error("queue: the worker could not start", { err }));
  return {
    stop: async (graceMs?: number) => {
      if (h.worker !== worker) return { finished: 0, aborted: 0 };
      const outcome = await stopWorker(graceMs ?? getConfig().SHUTDOWN_GRACE_MS);
      // The process's worker (a server draining for shutdown): its batches are back in line, and so are the
      // run and model slots their cells held, at once rather than after their leases.
      await releaseHeldAtStop();
      return outcome;
    },
  };
}

async function stopWorker(graceMs: number): Promise<StopOutcome> {
  const h = holder();
  if (!h.worker) return { finished: 0, aborted: 0 };
  const outcome = await cells.drain(graceMs);
  h.worker = null;
  return outcome;
}

/** One claim of a batch: an attempt of a pg-boss job. */
type CellClaim = {
  /** The claim's key: job id and retry count (an attempt after a lost lease is another claim, even in this process). */
  id: string;
  jobId: string;
  retryCount: number;
  retryLimit: number;
  data: unknown;
  /** -1 when the job's data is not a batch (it fails). */
  executionId: number;
};

const attemptKey = (id: string, retryCount: number) => `${id}:${retryCount}`;
const attemptsOf = (keys: string[]) => {
  const ids: string[] = [];
  const counts: number[] = [];
  for (const key of keys) {
    const at = key.lastIndexOf(":");
    ids.push(key.slice(0, at));
    counts.push(Number(key.slice(at + 1)));
  }
  return [ids, counts] as const;
};

/** pg-boss's table as a claim store: an attempt is claimed by fetch(), renewed by moving started_on. */
const claimStore: ClaimStore<CellClaim> = {
  async claim(_owner, _now, _leaseUntil, _maxAttempts, limit) {
    const jobs = (await running().boss.fetch<unknown>(cellQueueName, { batchSize: limit, includeMetadata: true })) as PgBoss.JobWithMetadata<unknown>[];
    return jobs.map((job) => ({
      id: attemptKey(job.id, job.retryCount),
      jobId: job.id,
      retryCount: job.retryCount,
      retryLimit: job.retryLimit,
      data: job.data,
      executionId: jobDataSchema.safeParse(job.data).data?.executionId ?? -1,
    }));
  },
  async renew(_owner, keys) {
    const state = running();
    const [ids, counts] = attemptsOf(keys);
    const { rows } = await clusterPool(state.url).query<{ id: string; retry_count: number }>(
      `UPDATE ${bossSchema}.job j SET started_on = now()
       FROM unnest($2::uuid[], $3::int[]) AS a(id, retry_count)
       WHERE j.name = $1 AND j.id = a.id AND j.retry_count = a.retry_count AND j.state = 'active'
       RETURNING j.id, j.retry_count`,
      [cellQueueName, ids, counts],
    );
    return new Set(rows.map((r) => attemptKey(r.id, r.retry_count)));
  },
  // pg-boss's maintenance fails the attempts past their retry limit.
  failExhausted: async () => [],
  // Never called: the queue is shared (PostgreSQL), a dead process's claims run out.
  releaseDead: async () => 0,
  // An attempt no longer active is not this claim's any more (cancelled, expired, or given back).
  async cancelled(key) {
    const [[id], [retryCount]] = attemptsOf([key]);
    const { rows } = await clusterPool(running().url).query<{ state: string }>(
      `SELECT state::text AS state FROM ${bossSchema}.job WHERE name = $1 AND id = $2 AND retry_count = $3`,
      [cellQueueName, id, retryCount],
    );
    return rows[0]?.state !== "active";
  },
};

const cells = defineClaimQueue<CellClaim>({
  name: "cell batch",
  store: claimStore,
  maxAttempts: defaultRetryLimit + 1,
  exhausted: "given up: its attempts are spent",
  work: workBatch,
  failed: async (claim, _owner, error) =>
    log.error("queue: could not record the end of a batch; the visibility timeout returns it", { job_id: claim.jobId, err: error }),
  announce: () => undefined,
  channels: { wake: wakeChannel, cancel: cancelChannel },
  cancels: (claim, executionId) => claim.executionId === executionId,
  capacity: () => holder().worker?.concurrency ?? 0,
  idlePollMs: () => holder().state?.pollIntervalMs ?? defaultPollIntervalMs,
  leaseMs: () => (holder().state?.visibilitySeconds ?? getConfig().JOB_VISIBILITY_TIMEOUT_SECONDS) * 1000,
  shared: true,
  notifyUrl: () => holder().state?.url,
});

/**
 * Work one claimed attempt with the process's handler, then complete it or fail it (pg-boss retries it
 * while attempts remain) — only while the claim is still this process's: a cancelled or lost claim is left
 * as it is, and one stopped by a drain is given back at once, without spending an attempt.
 */
async function workBatch(claim: CellClaim, job: ClaimContext<string>): Promise<void> {
  const state = running();
  const handler = holder().worker?.handler;
  let givenBack: Promise<void> | undefined;
  const onStop = () => {
    if (job.stopKind() === "drain") givenBack = giveBack(state, [claim]);
  };
  job.signal.addEventListener("abort", onStop, { once: true });
  let error: unknown = null;
  try {
    const data = jobDataSchema.parse(claim.data);
    const cellJob: CellJob = {
      executionId: data.executionId,
      cells: data.cells,
      jobId: claim.jobId,
      attempt: claim.retryCount + 1,
      finalAttempt: claim.retryCount >= claim.retryLimit,
    };
    if (!handler) throw new Error("no worker in this process");
    if (!job.signal.aborted) await handler(cellJob, job.signal);
  } catch (err) {
    error = err;
  } finally {
    job.signal.removeEventListener("abort", onStop);
  }
  if (job.stopKind() !== null) return void (await givenBack);
  if (error === null) return complete(state, claim);
  log.warn("queue: batch failed, it will be retried if attempts remain", { job_id: claim.jobId, attempt: claim.retryCount + 1, err: error });
  await fail(state, claim, error instanceof Error ? error.message : String(error));
}

/** Fail (retry or give up, as pg-boss decides) only the attempt we hold. */
async function fail(state: QueueState, claim: CellClaim, message: string): Promise<void> {
  await clusterTransaction(clusterPool(state.url), async (client) => {
    const { rowCount } = await client.query(
      `SELECT 1 FROM ${bossSchema}.job WHERE name = $1 AND id = $2 AND retry_count = $3 AND state = 'active' FOR UPDATE`,
      [cellQueueName, claim.jobId, claim.retryCount],
    );
    if (!rowCount) return;
    await state.boss.fail(cellQueueName, claim.jobId, { message }, { db: { executeSql: (text: string, values: unknown[]) => client.query(text, values) } });
  });
}

/** Complete only the attempt we hold: after a lost lease the row belongs to another attempt. */
async function complete(state: QueueState, claim: CellClaim): Promise<void> {
  await clusterPool(state.url).query(
    `UPDATE ${bossSchema}.job SET state = 'completed', completed_on = now()
     WHERE name = $1 AND id = $2 AND retry_count = $3 AND state = 'active'`,
    [cellQueueName, claim.jobId, claim.retryCount],
  );
}

/**
 * Put claimed attempts straight back in line (shutdown) without spending an attempt: the next fetch
 * counts one, so the limit is raised by one as pg-boss's own retry() does.
 */
async function giveBack(state: QueueState, claims: CellClaim[]): Promise<void> {
  try {
    await clusterPool(state.url).query(
      `UPDATE ${bossSchema}.job j SET state = 'retry', start_after = now(), retry_limit = j.retry_limit + 1
       FROM unnest($2::uuid[], $3::int[]) AS a(id, retry_count)
       WHERE j.name = $1 AND j.id = a.id AND j.retry_count = a.retry_count AND j.state = 'active'`,
      [cellQueueName, claims.map((c) => c.jobId), claims.map((c) => c.retryCount)],
    );
    await getNotifier(state.url).publish(wakeChannel, null);
  } catch (err) {
    log.warn("queue: could not return batches at shutdown; they come back after the visibility timeout", { err });
  }
}
