/**
 * The job queue of the PostgreSQL store: a run's cells are enqueued as batches (one pg-boss job per
 * batch) in the same database, and every server process and `npm run worker` process works them.
 *
 * What pg-boss 10 gives us (checked in node_modules/pg-boss/src): jobs live in pgboss.job (partitioned
 * per queue); fetch() claims with `FOR UPDATE SKIP LOCKED` and marks the job `active`, so N processes
 * never claim one job twice; fail() puts a job back in `retry` until retry_count reaches retry_limit;
 * its maintenance (one process of the cluster per maintenanceIntervalSeconds, default 120 s, gated by
 * pgboss.version.maintained_on) fails every `active` job whose `started_on + expire_in` has passed,
 * which returns it to `retry` — that is the visibility timeout. Schema creation on start() runs under
 * an advisory lock and tolerates a concurrent creator; createQueue() is DDL that can deadlock with
 * other sessions, so processes set up one at a time under an advisory lock of ours.
 *
 * What we add: our own fetch loop (pg-boss's work() sleeps a full polling interval between jobs and
 * handles a fetched batch as one unit) so each process runs up to `concurrency` jobs at once and asks
 * for more as soon as a slot frees; a heartbeat that moves `started_on` forward every third of the
 * visibility timeout, so a live process keeps a long batch while a dead one loses it after the timeout;
 * completion guarded by (id, retry_count), so a process whose lease ran out cannot complete the attempt
 * another process now holds; wake-ups and cancels over NOTIFY (notify.ts) so idle processes start at
 * once and a cancel aborts the running batches of every process.
 *
 * Recovery time after a process dies: the visibility timeout T, then up to two maintenance intervals
 * (set to T/4, at least 1 s: a process's timer may fire just before the cluster-wide gate opens) before
 * maintenance sees it, then pg-boss's retry delay (1 s) and one idle poll (2 s) — at most ~1.5 × T + 3 s.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import PgBoss from "pg-boss";
import { z } from "zod";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { sessionClient } from "@/lib/pg-session";
import { processSingleton } from "@/lib/process-state";
import { getNotifier } from "./notify";
import { clusterPool, clusterTransaction, clusterUrl } from "./pool";
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
  workers: Set<CellWorker>;
  unsubscribe: Array<() => Promise<void>>;
};

const holder = () => processSingleton<{ state: QueueState | null; starting: Promise<QueueState> | null }>("cluster.queue", () => ({
  state: null,
  starting: null,
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
  const state: QueueState = {
    url,
    boss,
    visibilitySeconds,
    pollIntervalMs: options.pollIntervalMs ?? defaultPollIntervalMs,
    workers: new Set(),
    unsubscribe: [],
  };
  const notifier = getNotifier(url);
  state.unsubscribe.push(
    await notifier.subscribe(wakeChannel, () => {
      for (const worker of state.workers) worker.wake();
    }),
    await notifier.subscribe(cancelChannel, (payload) => {
      if (typeof payload !== "number") return;
      for (const worker of state.workers) worker.abortExecution(payload);
    }),
  );
  return state;
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
  h.state = null;
  const grace = graceMs ?? getConfig().SHUTDOWN_GRACE_MS;
  await Promise.all([...state.workers].map((w) => w.stop(grace)));
  // The batches are back in line; so are the run and model slots their cells held (not after their leases).
  await releaseHeldAtStop();
  await Promise.all(state.unsubscribe.map((u) => u().catch(() => undefined)));
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

/** What stopping a worker did with the batches it was running: finished within the grace period, or given back. */
/** Free every semaphore row of this process (lib/cluster/semaphore.ts, releaseAllHeld); a failure is only logged. */
async function releaseHeldAtStop(): Promise<void> {
  await releaseAllHeld().catch((err: unknown) => log.warn("queue: could not free the semaphore slots at shutdown; their leases free them", { err }));
}

export type StopOutcome = { finished: number; aborted: number };

/**
 * Work cell batches in this process, up to `concurrency` at once, until stopQueue() or the returned
 * stop(). A handler that resolves completes its job; one that throws has it retried (after 1 s, up to
 * the retry limit). The signal aborts when the execution is cancelled, when this process's lease on
 * the job was lost (it stalled past the visibility timeout), or at shutdown after the grace period.
 */
export function workCells(handler: CellHandler, options: { concurrency: number }): { stop: (graceMs?: number) => Promise<StopOutcome> } {
  const state = running();
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
    throw new Error(`concurrency must be a positive integer, got ${options.concurrency}`);
  }
  const worker = new CellWorker(state, handler, options.concurrency);
  state.workers.add(worker);
  worker.start();
  return {
    stop: async (graceMs?: number) => {
      const outcome = await worker.stop(graceMs ?? getConfig().SHUTDOWN_GRACE_MS);
      state.workers.delete(worker);
      // The last worker of the process (a server draining for shutdown): its batches are back in line,
      // and so are the run and model slots their cells held, at once rather than after their leases.
      if (state.workers.size === 0) await releaseHeldAtStop();
      return outcome;
    },
  };
}

type ActiveJob = {
  id: string;
  executionId: number;
  retryCount: number;
  expireInSeconds: number;
  lastBeat: number;
  controller: AbortController;
  /** Not ours any more (lease lost, cancelled, or given back at shutdown): finish without touching the row. */
  released: boolean;
  done: Promise<void>;
};

type FetchedJob = PgBoss.JobWithMetadata<unknown>;

/**
 * One attempt of a job. The job id alone names every attempt of a batch: a process whose lease ran out
 * while it still worked the batch can fetch the batch's next attempt before it notices, and the two
 * must not share (and then delete) one entry.
 */
const attemptKey = (id: string, retryCount: number) => `${id}:${retryCount}`;

/** Cancels remembered for the fetch race (cancelledMeanwhile): one a minute old cannot matter any more. */
const cancelMemoryMs = 60_000;

class CellWorker {
  private readonly active = new Map<string, ActiveJob>();
  /** When a cancel of each execution was last heard: a fetch already in flight then may return its jobs. */
  private readonly cancelHeardAt = new Map<number, number>();
  private stopping = false;
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private loop: Promise<void> = Promise.resolve();
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    private readonly state: QueueState,
    private readonly handler: CellHandler,
    private readonly concurrency: number,
  ) {}

  start(): void {
    const tickMs = Math.max(250, Math.min(1_000, (this.state.visibilitySeconds * 1000) / 6));
    this.heartbeat = setInterval(() => void this.beat(), tickMs);
    this.loop = this.run().catch((err) => log.error("queue: worker loop stopped", { err }));
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  abortExecution(executionId: number): void {
    const now = Date.now();
    for (const [id, at] of this.cancelHeardAt) if (now - at > cancelMemoryMs) this.cancelHeardAt.delete(id);
    this.cancelHeardAt.set(executionId, now);
    for (const job of this.active.values()) {
      if (job.executionId === executionId && !job.released) {
        job.released = true;
        job.controller.abort(new Error(`execution ${executionId} was cancelled`));
      }
    }
  }

  /** Stop taking batches at once; running ones get `graceMs` to finish, the rest go back to the queue. */
  async stop(graceMs: number): Promise<StopOutcome> {
    if (this.stopping) {
      await this.loop;
      return { finished: 0, aborted: 0 };
    }
    this.stopping = true;
    this.wake();
    await this.loop;
    const running = [...this.active.values()];
    const finished = Promise.all(running.map((j) => j.done));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([finished, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    const left = [...this.active.values()].filter((j) => !j.released);
    if (left.length > 0) {
      for (const job of left) job.released = true;
      await this.giveBack(left);
      for (const job of left) job.controller.abort(new Error("worker shutting down: batch returned to the queue"));
      // Handlers that honour the signal end now; one that does not cannot complete a job it gave back.
      await Promise.race([finished, new Promise<void>((resolve) => setTimeout(resolve, 2_000).unref())]);
    }
    if (this.heartbeat) clearInterval(this.heartbeat);
    return { finished: running.length - left.length, aborted: left.length };
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const free = this.concurrency - this.active.size;
      let fetched = 0;
      if (free > 0) {
        this.woken = false;
        const fetchedAt = Date.now();
        const jobs = (await this.state.boss.fetch<unknown>(cellQueueName, { batchSize: free, includeMetadata: true })) as FetchedJob[];
        fetched = jobs.length;
        if (this.stopping) {
          await this.giveBack(jobs.map((j) => ({ id: j.id, retryCount: j.retryCount })));
          break;
        }
        for (const job of jobs) this.launch(job, fetchedAt);
        // A full batch means there may be more: ask again as soon as a slot is free.
        if (fetched === free) continue;
      }
      if (this.woken && free > 0 && fetched === 0) continue;
      await new Promise<void>((resolve) => {
        // A wake-up heard since we last looked is taken now, and used up: left set, a wake-up heard
        // while every slot is busy (a run enqueued meanwhile) resolved this wait at once on every
        // turn, and the loop spun on already-resolved promises with no timer, heartbeat or I/O ever
        // running again — the process hung at full CPU and its leases ran out.
        if (this.woken) {
          this.woken = false;
          return resolve();
        }
        const timer = setTimeout(done, this.state.pollIntervalMs);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wakeUp = done;
      });
      this.wakeUp = null;
    }
  }

  private launch(job: FetchedJob, fetchedAt: number): void {
    const controller = new AbortController();
    // Every judge call of the batch listens on it (batch_size at once): many is expected, not a leak.
    setMaxListeners(0, controller.signal);
    const entry: ActiveJob = {
      id: job.id,
      executionId: -1,
      retryCount: job.retryCount,
      expireInSeconds: Number(job.expireInSeconds) || this.state.visibilitySeconds,
      lastBeat: Date.now(),
      controller,
      released: false,
      done: Promise.resolve(),
    };
    const key = attemptKey(job.id, job.retryCount);
    this.active.set(key, entry);
    entry.done = (async () => {
      let error: unknown = null;
      try {
        const data = jobDataSchema.parse(job.data);
        entry.executionId = data.executionId;
        const cellJob: CellJob = {
          executionId: data.executionId,
          cells: data.cells,
          jobId: job.id,
          attempt: job.retryCount + 1,
          finalAttempt: job.retryCount >= job.retryLimit,
        };
        if (await this.cancelledMeanwhile(data.executionId, job.id, fetchedAt)) entry.released = true;
        else await this.handler(cellJob, controller.signal);
      } catch (err) {
        error = err;
      }
      this.active.delete(key);
      this.wake();
      if (entry.released) return;
      try {
        if (error === null) await this.complete(entry);
        else {
          log.warn("queue: batch failed, it will be retried if attempts remain", { job_id: job.id, attempt: job.retryCount + 1, err: error });
          const message = error instanceof Error ? error.message : String(error);
          await this.fail(entry, message);
        }
      } catch (err) {
        // The row stays active: the visibility timeout returns it to the queue.
        log.error("queue: could not record the end of a batch", { job_id: job.id, err });
      }
    })();
  }

  /**
   * A cancel heard while our fetch was in flight found this job already claimed, so the abort missed
   * it: ask the row (only in that race) rather than work a cancelled batch until the next heartbeat.
   */
  private async cancelledMeanwhile(executionId: number, jobId: string, fetchedAt: number): Promise<boolean> {
    const heard = this.cancelHeardAt.get(executionId);
    if (heard === undefined || heard < fetchedAt) return false;
    const { rows } = await clusterPool(this.state.url).query<{ state: string }>(
      `SELECT state::text AS state FROM ${bossSchema}.job WHERE name = $1 AND id = $2`,
      [cellQueueName, jobId],
    );
    return rows[0]?.state !== "active";
  }

  /**
   * Fail (retry or give up, as pg-boss decides) only the attempt we hold: after a lost lease the row
   * belongs to another attempt, perhaps this process's own.
   */
  private async fail(job: ActiveJob, message: string): Promise<void> {
    await clusterTransaction(clusterPool(this.state.url), async (client) => {
      const { rowCount } = await client.query(
        `SELECT 1 FROM ${bossSchema}.job WHERE name = $1 AND id = $2 AND retry_count = $3 AND state = 'active' FOR UPDATE`,
        [cellQueueName, job.id, job.retryCount],
      );
      if (!rowCount) return;
      await this.state.boss.fail(cellQueueName, job.id, { message }, { db: { executeSql: (text: string, values: unknown[]) => client.query(text, values) } });
    });
  }

  /** Complete only the attempt we hold: after a lost lease the row belongs to another attempt. */
  private async complete(job: ActiveJob): Promise<void> {
    await clusterPool(this.state.url).query(
      `UPDATE ${bossSchema}.job SET state = 'completed', completed_on = now()
       WHERE name = $1 AND id = $2 AND retry_count = $3 AND state = 'active'`,
      [cellQueueName, job.id, job.retryCount],
    );
  }

  /**
   * Put claimed jobs straight back in line (shutdown) without spending an attempt: the next fetch
   * counts one, so the limit is raised by one as pg-boss's own retry() does.
   */
  private async giveBack(jobs: Array<{ id: string; retryCount: number }>): Promise<void> {
    if (jobs.length === 0) return;
    try {
      await clusterPool(this.state.url).query(
        `UPDATE ${bossSchema}.job j SET state = 'retry', start_after = now(), retry_limit = j.retry_limit + 1
         FROM unnest($2::uuid[], $3::int[]) AS a(id, retry_count)
         WHERE j.name = $1 AND j.id = a.id AND j.retry_count = a.retry_count AND j.state = 'active'`,
        [cellQueueName, jobs.map((j) => j.id), jobs.map((j) => j.retryCount)],
      );
      await getNotifier(this.state.url).publish(wakeChannel, null);
    } catch (err) {
      log.warn("queue: could not return batches at shutdown; they come back after the visibility timeout", { err });
    }
  }

  /** Renew the leases due (every third of their timeout); abort the jobs whose lease is gone. */
  private async beat(): Promise<void> {
    const now = Date.now();
    const due = [...this.active.values()].filter((j) => !j.released && now - j.lastBeat >= (j.expireInSeconds * 1000) / 3);
    if (due.length === 0) return;
    for (const job of due) job.lastBeat = now;
    let kept: Set<string>;
    try {
      const { rows } = await clusterPool(this.state.url).query<{ id: string; retry_count: number }>(
        `UPDATE ${bossSchema}.job j SET started_on = now()
         FROM unnest($2::uuid[], $3::int[]) AS a(id, retry_count)
         WHERE j.name = $1 AND j.id = a.id AND j.retry_count = a.retry_count AND j.state = 'active'
         RETURNING j.id, j.retry_count`,
        [cellQueueName, due.map((j) => j.id), due.map((j) => j.retryCount)],
      );
      kept = new Set(rows.map((r) => attemptKey(r.id, r.retry_count)));
    } catch (err) {
      // Try again on the next tick; the lease has two more thirds of its time.
      for (const job of due) job.lastBeat = 0;
      log.warn("queue: heartbeat failed", { err });
      return;
    }
    for (const job of due) {
      const key = attemptKey(job.id, job.retryCount);
      if (kept.has(key) || job.released || this.active.get(key) !== job) continue;
      job.released = true;
      job.controller.abort(new Error("batch is no longer ours (cancelled, or the lease ran out)"));
    }
  }
}
