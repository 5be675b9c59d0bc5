/**
 * The generations' queue (issue 37): every server process and every `npm run worker` process claims
 * generations from their rows (db/repositories/generation-queue.ts) — up to WORKER_CONCURRENCY at once —
 * and works them (work.ts). A claim is a lease of JOB_VISIBILITY_TIMEOUT_SECONDS renewed every third of
 * it, as a queued run's batches are: a process that dies loses its generations when their leases run
 * out and another process takes them up where they were (after MAX_ATTEMPTS lost claims one is failed,
 * saying so); a process that shuts down gives its generations back at once. A cancel from any process
 * ends the row first; the process working it hears it over NOTIFY (PostgreSQL) or at its next renewal
 * and stops its calls. On SQLite the server is the only process: at start-up every claim is a dead one's.
 */
import "server-only";
import { hostname } from "node:os";
import { setMaxListeners } from "node:events";
import { randomUUID } from "node:crypto";
import { dialect } from "@/db/dialect";
import { claimGeneration, failExhaustedGenerations, finishGeneration, releaseDeadClaims, renewGenerationLeases } from "@/db/repositories/generation-queue";
import { getGeneration, type GenerationRow } from "@/db/repositories/targets";
import { getConfig } from "@/lib/config";
import { leaseMs } from "@/lib/jobs";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { announceGeneration, generationCancelChannel, generationWakeChannel, onClusterChannel, publish } from "./events";
import { workGeneration, type StopKind } from "./work";

/** Claims lost (the process died holding it) before a generation is failed rather than taken up again. */
export const MAX_ATTEMPTS = 3;
export const EXHAUSTED_MESSAGE = `interrupted: the processes working it stopped ${MAX_ATTEMPTS} times without giving it back (server restarted or killed); the conversations written so far are kept`;
const IDLE_POLL_MS = 2_000;

type Working = { controller: AbortController; stop: StopKind | null; draining: boolean; finished: Promise<void> };
type QueueState = {
  owner: string;
  /** False in a process that only creates and follows generations (tests of the cluster, a process of the API alone). */
  worksHere: boolean;
  started: Promise<void> | null;
  stopping: boolean;
  working: Map<number, Working>;
  wake: (() => void) | null;
  woken: boolean;
  loop: Promise<void> | null;
  heartbeat: NodeJS.Timeout | null;
  unsubscribe: Array<() => Promise<void>>;
};

const state = processSingleton<QueueState>("generation.queue", () => ({
  owner: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
  worksHere: true,
  started: null,
  stopping: false,
  working: new Map(),
  wake: null,
  woken: false,
  loop: null,
  heartbeat: null,
  unsubscribe: [],
}));

const iso = (ms: number) => new Date(ms).toISOString();

/** Start claiming generations in this process (idempotent): servers at boot and before creating one, workers at start. */
export function startGenerationQueue(): Promise<void> {
  if (state.stopping) return Promise.resolve();
  state.started ??= (async () => {
    if (!dialect.queuesRuns) await releaseDeadClaims(state.owner);
    state.unsubscribe.push(
      await onClusterChannel(generationWakeChannel, () => wakeGenerationQueue()),
      await onClusterChannel(generationCancelChannel, (payload) => {
        if (typeof payload === "number") stopLocal(payload, "cancel");
      }),
    );
    const beatMs = Math.max(250, Math.min(10_000, leaseMs() / 3));
    state.heartbeat = setInterval(() => void beat().catch((err: unknown) => log.warn("generation: lease renewal failed", { err })), beatMs);
    state.heartbeat.unref();
    state.loop = claimLoop().catch((err: unknown) => log.error("generation: queue loop stopped", { err }));
  })().catch((error: unknown) => {
    state.started = null;
    throw error;
  });
  return state.started;
}

/** Whether this process claims generations (default yes); off, it only creates and follows them. */
export function workGenerationsHere(on: boolean): void {
  state.worksHere = on;
  if (on) wakeGenerationQueue();
}

/** A generation was created or given back: look for it now, here and (PostgreSQL) in every process. */
export function wakeGenerationQueue(broadcast = false): void {
  state.woken = true;
  state.wake?.();
  if (broadcast && dialect.queuesRuns) void publish(generationWakeChannel, null);
}

async function claimLoop(): Promise<void> {
  while (!state.stopping) {
    state.woken = false;
    const capacity = getConfig().WORKER_CONCURRENCY;
    try {
      const now = Date.now();
      if (state.worksHere) for (const id of await failExhaustedGenerations(iso(now), MAX_ATTEMPTS, EXHAUSTED_MESSAGE)) announceGeneration(id);
      while (state.worksHere && !state.stopping && state.working.size < capacity) {
        const row = await claimGeneration(state.owner, iso(Date.now()), iso(Date.now() + leaseMs()), MAX_ATTEMPTS);
        if (!row) break;
        launch(row);
      }
    } catch (err) {
      log.warn("generation: claiming failed; trying again", { err });
    }
    if (state.woken || state.stopping) continue;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, IDLE_POLL_MS);
      timer.unref?.();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      state.wake = done;
    });
    state.wake = null;
  }
}

function launch(row: GenerationRow): void {
  const controller = new AbortController();
  // Every target and simulator call of the generation listens on it (batch_size at once): many is expected, not a leak.
  setMaxListeners(0, controller.signal);
  const entry: Working = { controller, stop: null, draining: false, finished: Promise.resolve() };
  state.working.set(row.id, entry);
  announceGeneration(row.id);
  entry.finished = workGeneration(row, state.owner, { signal: controller.signal, stopKind: () => entry.stop, draining: () => entry.draining })
    .catch(async (error: unknown) => {
      log.error("generation failed", { generation_id: row.id, error });
      await finishGeneration(row.id, state.owner, {
        completed: row.completed, failed: row.failed, usage: row.usage, stopReasons: row.stopReasons, status: "failed",
        error: `generation stopped: ${(error as Error).message}`, finishedAt: new Date().toISOString(),
      }).catch(() => undefined);
      announceGeneration(row.id);
    })
    .finally(() => {
      state.working.delete(row.id);
      wakeGenerationQueue();
    });
}

/** Stop a generation this process works: its calls are aborted at once. */
function stopLocal(id: number, kind: StopKind): boolean {
  const w = state.working.get(id);
  if (!w) return false;
  w.stop ??= kind;
  w.controller.abort(new Error(kind === "cancel" ? "cancelled" : kind === "lost" ? "its claim was lost" : "shutting down"));
  return true;
}

/** Renew this process's leases; a generation whose row says it is not ours any more (cancelled, or taken) stops. */
async function beat(): Promise<void> {
  const ids = [...state.working.keys()];
  if (ids.length === 0) return;
  const kept = await renewGenerationLeases(state.owner, ids, iso(Date.now() + leaseMs()));
  for (const id of ids) {
    if (kept.has(id)) continue;
    const row = await getGeneration(id);
    stopLocal(id, row && row.status === "cancelled" ? "cancel" : "lost");
  }
}

/** Cancel: stop it here if this process works it, else tell every process (the row is already ended). Resolves once it stopped here. */
export async function stopEverywhere(id: number): Promise<void> {
  const local = state.working.get(id);
  if (stopLocal(id, "cancel") && local) {
    await Promise.race([local.finished, new Promise((r) => setTimeout(r, 10_000).unref())]);
    return;
  }
  if (dialect.queuesRuns) await publish(generationCancelChannel, id);
}

/** Resolves when this process has stopped working the generation (tests; a cancel's answer). */
export async function finishedHere(id: number): Promise<void> {
  await state.working.get(id)?.finished;
}

/**
 * Shutdown: claim nothing more, let the conversations in flight finish for `graceMs`, then abort the
 * rest and give every generation back (its progress saved) for another process or the next start.
 */
export async function drainGenerations(graceMs: number): Promise<{ given_back: number }> {
  state.stopping = true;
  state.wake?.();
  const working = [...state.working.entries()];
  for (const [, w] of working) w.draining = true;
  const all = Promise.all(working.map(([, w]) => w.finished));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([all, new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
  clearTimeout(timer);
  for (const [id] of working) stopLocal(id, "drain");
  await Promise.race([all, new Promise<void>((r) => setTimeout(r, 2_000).unref())]);
  if (state.heartbeat) clearInterval(state.heartbeat);
  await Promise.all(state.unsubscribe.splice(0).map((u) => u().catch(() => undefined)));
  await state.loop;
  return { given_back: working.length };
}
