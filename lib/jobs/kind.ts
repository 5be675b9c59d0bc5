/**
 * A job kind (lib/jobs): background work kept on a row of the store, registered once with how its rows
 * are leased and ended. Each kind gets from it what used to be written once per kind: the lease held
 * and renewed while a process works a job, the sweep that ends jobs whose process died, the start-up
 * recovery of a single-process store, a cancel that works from any process (the row is ended first; the
 * process working it stops at once when it is this one, over NOTIFY on a shared store, and at its next
 * renewal in any case), the abort signal every call of the job listens on, and its progress events.
 */
import "server-only";
import { dialect } from "@/db/dialect";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { announce, follow, onCancelElsewhere, publishCancel } from "./events";
import { holdLease, jobController, leaseUntil, startLeaseSweep } from "./lease";

/** How a kind's rows are leased and ended (its repository); every update only touches a job still active. */
export interface JobStore {
  /** Move the lease of a job still active; false when it has ended (cancelled or swept by any process). */
  renew(id: number, until: string): Promise<boolean>;
  /** End failed, with `message`, the active jobs whose lease ran out before `now`; their ids. */
  failExpired(now: string, message: string): Promise<number[]>;
  /** End failed every active job (a single-process store at start-up: nobody can finish them); how many. */
  failUnfinished(message: string, now: string): Promise<number>;
  /** End an active job cancelled, saying `message`; false when it had already ended. */
  cancel(id: number, message: string, now: string): Promise<boolean>;
}

export type JobKindSpec = {
  /** The kind's name as logs, leases and events say it ("comparison"). */
  name: string;
  store: JobStore;
  /** What a job whose process died says (its lease ran out). */
  expired: string;
  /** What a job a stopped single-process server left says. */
  interrupted: string;
  /**
   * The work ends its own row when its signal aborts "cancelled" (a run writes its totals as it ends): a
   * cancel of a job worked here aborts it first and waits for it, and the store's `cancel` ends the row
   * only if the work did not (or the job is worked elsewhere). Without it the row is ended first.
   */
  endsOnCancel?: boolean;
  /**
   * The store's `failUnfinished` ends only jobs no process can finish (a queued run with no work left in
   * any process), so start-up recovery runs on a shared store too, not only on a single-process one.
   */
  recoversShared?: boolean;
};

/** What the work of one job is handed. */
export type JobContext = {
  id: number;
  /** Aborted when the job is cancelled (from any process), swept, or its lease is lost: every call listens on it. */
  signal: AbortSignal;
  /** Say the job changed (followers read its row). */
  progress(): void;
};

type Active = { controller: AbortController; finished: Promise<void> };

/** The jobs this process works, by `kind id`. */
const active = processSingleton("jobs.active", () => new Map<string, Active>());

export type JobKind = ReturnType<typeof defineJobKind>;

/** Register a kind of background work once; what it returns starts, cancels, sweeps and follows its jobs. */
export function defineJobKind(spec: JobKindSpec) {
  const key = (id: number) => `${spec.name} ${id}`;
  const stopHere = (id: number, why: string): Active | undefined => {
    const here = active.get(key(id));
    here?.controller.abort(new Error(why));
    return here;
  };

  return {
    name: spec.name,
    /** The lease a new job's row is inserted with. */
    leaseUntil,

    /**
     * Work job `id` (its row exists, leased by {@link leaseUntil}) in this process, from the next turn of the
     * loop: the lease is held until `work` ends; if it throws, `failed` ends the row with the error.
     */
    start(id: number, work: (job: JobContext) => Promise<void>, failed: (error: Error) => Promise<void>): void {
      const controller = jobController();
      const lease = holdLease(key(id), (until) => spec.store.renew(id, until), () => controller.abort(new Error(`ended elsewhere: this process no longer holds the ${spec.name}`)));
      const job: JobContext = { id, signal: controller.signal, progress: () => announce(spec.name, id) };
      const finished = new Promise<void>((resolve) =>
        setImmediate(() => {
          work(job)
            .catch(async (error: unknown) => {
              log.error(`${spec.name} failed`, { id, error: (error as Error).message });
              await failed(error as Error).catch((err: unknown) => log.warn(`${spec.name}: its failure was not saved`, { id, err }));
            })
            .finally(() => {
              lease.stop();
              active.delete(key(id));
              announce(spec.name, id);
              resolve();
            });
        }),
      );
      active.set(key(id), { controller, finished });
    },

    /**
     * Cancel job `id` from any process: its row ends `cancelled` first (false: it had already ended), then
     * the process working it stops its calls — this one at once (resolving once it stopped, 10 s at most),
     * another over NOTIFY (shared store) or at its next lease renewal.
     */
    async cancel(id: number, message = "cancelled"): Promise<boolean> {
      const stop = async () => {
        const here = stopHere(id, "cancelled");
        if (here) await Promise.race([here.finished, new Promise((r) => setTimeout(r, 10_000).unref())]);
        return here;
      };
      const first = spec.endsOnCancel ? await stop() : undefined;
      const ended = await spec.store.cancel(id, message, new Date().toISOString());
      const here = spec.endsOnCancel ? first : await stop();
      if (!here && ended && dialect.queuesRuns) await publishCancel(spec.name, id);
      if (ended || here) announce(spec.name, id);
      return ended || Boolean(here);
    },

    /** Every process, on either store: end failed the jobs whose lease ran out (their process died); how many. */
    async sweep(now: string): Promise<number> {
      const ended = await spec.store.failExpired(now, spec.expired);
      // One this process still works (its loop stalled past the lease): ended, so its calls stop here too.
      for (const id of ended) stopHere(id, "ended: its lease ran out");
      for (const id of ended) announce(spec.name, id);
      return ended.length;
    },

    /**
     * At start-up on SQLite (one server owns the store): a job a stopped server left unfinished can never
     * finish, so it ends failed, saying so. On PostgreSQL another process may be working it: left to the sweep.
     */
    async recover(): Promise<number> {
      if (dialect.queuesRuns && !spec.recoversShared) return 0;
      const failed = await spec.store.failUnfinished(spec.interrupted, new Date().toISOString());
      if (failed) log.warn(`${spec.name}s a stopped server left unfinished ended failed`, { count: failed });
      return failed;
    },

    /** At boot: recover, then sweep every half lease and hear cancels from other processes. */
    async boot(): Promise<void> {
      await this.recover();
      startLeaseSweep(`${spec.name}s`, (now) => this.sweep(now));
      await onCancelElsewhere(spec.name, (id) => void stopHere(id, "cancelled"));
    },

    /** Resolves once this process's work of the job is over (tests, a cancel's answer). */
    async waitFor(id: number): Promise<void> {
      await active.get(key(id))?.finished;
    },

    /** Whether this process works the job. */
    worksHere: (id: number): boolean => active.has(key(id)),

    /**
     * Shutdown: the jobs of this kind worked here get `graceMs` to finish; then those still working are
     * aborted with `why` (and given 2 s to unwind). How many finished in time and how many were aborted.
     */
    async drain(graceMs: number, why: string): Promise<{ finished: number; aborted: number }> {
      const mine = [...active.entries()].filter(([k]) => k.startsWith(`${spec.name} `));
      const settled = Promise.all(mine.map(([, a]) => a.finished));
      const inTime = await Promise.race([settled.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), graceMs).unref())]);
      let aborted = 0;
      if (!inTime) {
        for (const [k, a] of mine) {
          if (!active.has(k)) continue;
          a.controller.abort(new Error(why));
          aborted++;
        }
        await Promise.race([settled, new Promise((r) => setTimeout(r, 2_000).unref())]);
      }
      return { finished: mine.length - aborted, aborted };
    },

    /** Call `onChange` whenever the job changes, here or (shared store) in another process; resolves to the unsubscribe. */
    follow: (id: number, onChange: () => void) => follow(spec.name, id, onChange),
  };
}

/** Stop every job this process works and wait for them (a test file's end: its store is going away). */
export async function stopAllJobs(why: string): Promise<void> {
  const all = [...active.values()];
  for (const a of all) a.controller.abort(new Error(why));
  await Promise.allSettled(all.map((a) => a.finished));
}
