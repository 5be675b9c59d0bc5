/**
 * The generations' queue (issue 37), a lib/jobs claim queue (lib/jobs/claims.ts): every server process and
 * every `npm run worker` process claims generations from their rows (db/repositories/generation-queue.ts) —
 * up to WORKER_CONCURRENCY at once — and works them (work.ts). The claim is a lease renewed every third of
 * it: a process that dies loses its generations when their leases run out and another process takes them
 * up where they were (after MAX_ATTEMPTS lost claims one is failed, saying so); a process that shuts down
 * gives its generations back at once. A cancel from any process ends the row first; the process working it
 * hears it over NOTIFY (PostgreSQL) or at its next renewal and stops its calls. On SQLite the server is the
 * only process: at start-up every claim is a dead one's. What is registered here is what is generations'.
 */
import "server-only";
import { claimGeneration, failExhaustedGenerations, finishGeneration, releaseDeadClaims, renewGenerationLeases } from "@/db/repositories/generation-queue";
import { getGeneration, type GenerationRow } from "@/db/repositories/targets";
import { defineClaimQueue } from "@/lib/jobs";
import { announceGeneration, generationCancelChannel, generationWakeChannel } from "./events";
import { workGeneration } from "./work";

/** Claims lost (the process died holding it) before a generation is failed rather than taken up again. */
export const MAX_ATTEMPTS = 3;
export const EXHAUSTED_MESSAGE = `interrupted: the processes working it stopped ${MAX_ATTEMPTS} times without giving it back (server restarted or killed); the conversations written so far are kept`;

const queue = defineClaimQueue<GenerationRow>({
  name: "generation",
  store: {
    claim: async (owner, now, leaseUntil, maxAttempts, limit) => {
      const rows: GenerationRow[] = [];
      for (let row; rows.length < limit && (row = await claimGeneration(owner, now, leaseUntil, maxAttempts)); ) rows.push(row);
      return rows;
    },
    renew: renewGenerationLeases,
    failExhausted: failExhaustedGenerations,
    releaseDead: releaseDeadClaims,
    cancelled: async (id) => (await getGeneration(id))?.status === "cancelled",
  },
  maxAttempts: MAX_ATTEMPTS,
  exhausted: EXHAUSTED_MESSAGE,
  work: (row, job) => workGeneration(row, job.owner, job),
  failed: (row, owner, error) =>
    finishGeneration(row.id, owner, {
      completed: row.completed, failed: row.failed, usage: row.usage, stopReasons: row.stopReasons, status: "failed",
      error: `generation stopped: ${error.message}`, finishedAt: new Date().toISOString(),
    }),
  announce: announceGeneration,
  channels: { wake: generationWakeChannel, cancel: generationCancelChannel },
});

/** Start claiming generations in this process (idempotent): servers at boot and before creating one, workers at start. */
export const startGenerationQueue = (): Promise<void> => queue.start();

/** Whether this process claims generations (default yes); off, it only creates and follows them. */
export const workGenerationsHere = (on: boolean): void => queue.workHere(on);

/** A generation was created or given back: look for it now, here and (PostgreSQL) in every process. */
export const wakeGenerationQueue = (broadcast = false): void => queue.wake(broadcast);

/** Cancel: stop it here if this process works it, else tell every process (the row is already ended). Resolves once it stopped here. */
export const stopEverywhere = (id: number): Promise<void> => queue.stopEverywhere(id);

/** Resolves when this process has stopped working the generation (tests; a cancel's answer). */
export const finishedHere = (id: number): Promise<void> => queue.finishedHere(id);

/**
 * Shutdown: claim nothing more, let the conversations in flight finish for `graceMs`, then abort the
 * rest and give every generation back (its progress saved) for another process or the next start.
 */
export const drainGenerations = (graceMs: number): Promise<{ finished: number; aborted: number }> => queue.drain(graceMs);
