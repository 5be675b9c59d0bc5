/**
 * Leases on background work (lib/jobs): the process working a job renews its row's `lease_until` every
 * third of a lease while it works, and every process sweeps for rows whose lease ran out — their process
 * died — and ends them. A renewal that finds the row ended (cancelled or swept by any process) tells the
 * holder, which stops its calls: so a process alive but stalled past its lease stops once it wakes.
 * The length is JOB_VISIBILITY_TIMEOUT_SECONDS, for every kind.
 */
import "server-only";
import { setMaxListeners } from "node:events";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { definePeriodic } from "./periodic";

export const leaseMs = (): number => getConfig().JOB_VISIBILITY_TIMEOUT_SECONDS * 1000;

/** The end of a lease taken now. */
export const leaseUntil = (from = Date.now()): string => new Date(from + leaseMs()).toISOString();

/** The leases this process holds, by what they are on ("comparison 12"). */
const held = processSingleton("jobs.leases", () => new Map<string, ReturnType<typeof setInterval>>());

/** Each held lease's renewal in flight, if any: stopping a lease waits for it. */
const renewing = processSingleton("jobs.renewing", () => new Map<string, Promise<unknown>>());

/**
 * Renew a row's lease every third of its length until stopped (the timer keeps no process alive).
 * `renew` resolves false when the row is no longer the holder's to work (it ended elsewhere): `lost` is
 * told once and the lease is stopped.
 */
export function holdLease(what: string, renew: (until: string) => Promise<boolean | void>, lost?: () => void): { stop(): void } {
  const timer = setInterval(() => {
    const renewal = renew(leaseUntil())
      .then((kept) => {
        if (kept !== false || !held.has(what)) return;
        void stopLease(what);
        lost?.();
      })
      .catch((error: unknown) => log.warn("could not renew a lease", { what, error: (error as Error).message }))
      .finally(() => renewing.get(what) === renewal && renewing.delete(what));
    renewing.set(what, renewal);
  }, Math.max(1_000, Math.floor(leaseMs() / 3)));
  timer.unref?.();
  held.set(what, timer);
  return { stop: () => void stopLease(what) };
}

/**
 * Stop renewing a lease (the work ended; or, in a test, the process is to look dead to the others).
 * Resolves once a renewal already under way has landed: after it, nothing of this process moves the lease.
 */
export async function stopLease(what: string): Promise<void> {
  clearInterval(held.get(what));
  held.delete(what);
  await renewing.get(what);
}

/** Stop every lease this process holds (a test file's end: the store they renew in is going away). */
export function stopAllLeases(): void {
  for (const timer of held.values()) clearInterval(timer);
  held.clear();
}

/** Run `sweep` now and every half lease (unref'd, once per process and `what`): it ends the rows whose lease ran out and says how many. */
export function startLeaseSweep(what: string, sweep: (now: string) => Promise<number>): void {
  definePeriodic(`jobs.sweep ${what}`, {
    everyMs: () => Math.max(1_000, Math.floor(leaseMs() / 2)),
    firstAfterMs: 0,
    pass: async () => {
      const ended = await sweep(new Date().toISOString());
      if (ended) log.warn("work whose process stopped ended failed", { what, count: ended });
    },
    failed: `lease sweep of ${what} failed`,
  }).start();
}

/** The abort controller of one job: every call of the job listens on its signal, many at once, which is expected, not a leak. */
export function jobController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
