/**
 * Claim queues (lib/jobs): background work kept on rows that any process may take up — every server
 * and every `npm run worker` process claims rows from a shared queue, up to WORKER_CONCURRENCY at once,
 * and works them. A claim is a lease of JOB_VISIBILITY_TIMEOUT_SECONDS renewed, for all the rows this
 * process holds at once, every third of it: a process that dies loses its rows when their leases run out
 * and another process claims them again (after `maxAttempts` lost claims a row is failed, saying so); a
 * process that shuts down lets its work finish for a grace period, then aborts it and the work gives its
 * rows back. A cancel from any process ends the row first; the process working it hears it over NOTIFY
 * (PostgreSQL) or at its next renewal and stops its calls. On SQLite the server is the only process: at
 * start-up every claim is a dead one's and is released at once.
 *
 * A kind registers once ({@link defineClaimQueue}) with its store operations, its work function and its
 * channels; the loop, capacity, heartbeat, abort controllers, local and remote stop, wake-ups and drain
 * are written here. Its state is a process singleton named `<name>.queue` (one per process however many
 * bundles load the module; lib/testing/setup/vitest-setup.ts drains `generation.queue` at a file's end).
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { dialect } from "@/db/dialect";
import { publish, subscribe } from "@/lib/cluster/notify";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { jobController, leaseMs, leaseUntil } from "./lease";

/** Why the work of a claimed row is told to stop: cancelled (anywhere), shutting down, or its claim was lost. */
export type ClaimStop = "cancel" | "drain" | "lost";

/** How a claim queue's rows are claimed, renewed and freed (its repository). Times are ISO strings. */
export interface ClaimStore<Row extends { id: number }> {
  /** Claim one row no live owner holds (oldest first) for `owner` until `leaseUntil`, counting an attempt; undefined when there is none. */
  claim(owner: string, now: string, leaseUntil: string, maxAttempts: number): Promise<Row | undefined>;
  /** Move the lease of the rows `owner` still holds among `ids`; the ids it still holds (a cancelled or lost one is not among them). */
  renew(owner: string, ids: number[], leaseUntil: string): Promise<Set<number>>;
  /** End failed, with `message`, the rows no live owner holds that were claimed `maxAttempts` times; their ids. */
  failExhausted(now: string, maxAttempts: number, message: string): Promise<number[]>;
  /** A single-process store at start-up: free every claim of another owner (it is a dead process's); how many. */
  releaseDead(owner: string): Promise<number>;
  /** Whether the row was ended cancelled: a renewal that no longer holds it tells a cancel from a lost claim. */
  cancelled(id: number): Promise<boolean>;
}

/** What the work of one claimed row is handed. */
export type ClaimContext = {
  id: number;
  /** This process's owner name, as the row's claim says it (the work writes only while the claim is its own). */
  owner: string;
  /** Aborted when the row is cancelled (from any process), its claim is lost, or the process stops: every call listens on it. */
  signal: AbortSignal;
  /** Why it was told to stop, once it was. */
  stopKind(): ClaimStop | null;
  /** The process is shutting down: start nothing new, finish what is in flight (then give the row back). */
  draining(): boolean;
};

export type ClaimQueueSpec<Row extends { id: number }> = {
  /** The kind's name as logs say it ("generation"); the queue's process state is `<name>.queue`. */
  name: string;
  store: ClaimStore<Row>;
  /** Claims lost (the process died holding it) before a row is failed rather than claimed again. */
  maxAttempts: number;
  /** What a row failed after `maxAttempts` lost claims says. */
  exhausted: string;
  /** Work one claimed row to its end (or until told to stop; a drained one gives its row back). */
  work(row: Row, job: ClaimContext): Promise<void>;
  /** The work threw: end the row failed (only while `owner` holds it). Errors are logged, not thrown. */
  failed(row: Row, owner: string, error: Error): Promise<void>;
  /** Say the row changed (claimed, failed): followers read it. */
  announce(id: number): void;
  /** NOTIFY channels (shared store only): `wake` a row was created or given back, `cancel` a row (its id) was cancelled. */
  channels: { wake: string; cancel: string };
  /** How many rows this process works at once (default WORKER_CONCURRENCY). */
  capacity?: () => number;
  /** How long an idle loop waits before looking again without a wake-up (default 2 s). */
  idlePollMs?: number;
};

type Working = { controller: AbortController; stop: ClaimStop | null; draining: boolean; finished: Promise<void> };
type QueueState = {
  owner: string;
  /** False in a process that only creates and follows rows (tests of the cluster, a process of the API alone). */
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

const iso = (ms: number) => new Date(ms).toISOString();
const stopMessage: Record<ClaimStop, string> = { cancel: "cancelled", lost: "its claim was lost", drain: "shutting down" };

export type ClaimQueue = ReturnType<typeof defineClaimQueue>;

/** Register a claim queue once; what it returns starts, wakes, cancels and drains this process's part of it. */
export function defineClaimQueue<Row extends { id: number }>(spec: ClaimQueueSpec<Row>) {
  const state = processSingleton<QueueState>(`${spec.name}.queue`, () => ({
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
  const capacity = spec.capacity ?? (() => getConfig().WORKER_CONCURRENCY);
  const idlePollMs = spec.idlePollMs ?? 2_000;

  const onChannel = async (channel: string, listener: (payload: unknown) => void): Promise<() => Promise<void>> =>
    dialect.queuesRuns ? subscribe(channel, listener) : async () => undefined;
  const send = async (channel: string, payload: number | null): Promise<void> => {
    await publish(channel, payload).catch((err: unknown) => log.warn(`${spec.name}: notification not sent`, { channel, err }));
  };

  /** Look for work now, here and (broadcast, shared store) in every process. */
  function wake(broadcast = false): void {
    state.woken = true;
    state.wake?.();
    if (broadcast && dialect.queuesRuns) void send(spec.channels.wake, null);
  }

  /** Stop a row this process works: its calls are aborted at once. */
  function stopLocal(id: number, kind: ClaimStop): boolean {
    const w = state.working.get(id);
    if (!w) return false;
    w.stop ??= kind;
    w.controller.abort(new Error(stopMessage[kind]));
    return true;
  }

  function launch(row: Row): void {
    const controller = jobController();
    const entry: Working = { controller, stop: null, draining: false, finished: Promise.resolve() };
    state.working.set(row.id, entry);
    spec.announce(row.id);
    const job: ClaimContext = { id: row.id, owner: state.owner, signal: controller.signal, stopKind: () => entry.stop, draining: () => entry.draining };
    entry.finished = spec
      .work(row, job)
      .catch(async (error: unknown) => {
        log.error(`${spec.name} failed`, { id: row.id, error });
        await spec.failed(row, state.owner, error as Error).catch((err: unknown) => log.warn(`${spec.name}: its failure was not saved`, { id: row.id, err }));
        spec.announce(row.id);
      })
      .finally(() => {
        state.working.delete(row.id);
        wake();
      });
  }

  async function claimLoop(): Promise<void> {
    while (!state.stopping) {
      state.woken = false;
      const room = capacity();
      try {
        if (state.worksHere) for (const id of await spec.store.failExhausted(iso(Date.now()), spec.maxAttempts, spec.exhausted)) spec.announce(id);
        while (state.worksHere && !state.stopping && state.working.size < room) {
          const row = await spec.store.claim(state.owner, iso(Date.now()), leaseUntil(), spec.maxAttempts);
          if (!row) break;
          launch(row);
        }
      } catch (err) {
        log.warn(`${spec.name}: claiming failed; trying again`, { err });
      }
      if (state.woken || state.stopping) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, idlePollMs);
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

  /** Renew this process's leases; a row that says it is not ours any more (cancelled, or taken) stops. */
  async function beat(): Promise<void> {
    const ids = [...state.working.keys()];
    if (ids.length === 0) return;
    const kept = await spec.store.renew(state.owner, ids, leaseUntil());
    for (const id of ids) {
      if (kept.has(id)) continue;
      stopLocal(id, (await spec.store.cancelled(id)) ? "cancel" : "lost");
    }
  }

  return {
    name: spec.name,
    /** This process's owner name on the rows it claims. */
    owner: (): string => state.owner,

    /** Start claiming in this process (idempotent; nothing once it drained): servers at boot and before creating a row, workers at start. */
    start(): Promise<void> {
      if (state.stopping) return Promise.resolve();
      state.started ??= (async () => {
        if (!dialect.queuesRuns) await spec.store.releaseDead(state.owner);
        state.unsubscribe.push(
          await onChannel(spec.channels.wake, () => wake()),
          await onChannel(spec.channels.cancel, (payload) => {
            if (typeof payload === "number") stopLocal(payload, "cancel");
          }),
        );
        const beatMs = Math.max(250, Math.min(10_000, leaseMs() / 3));
        state.heartbeat = setInterval(() => void beat().catch((err: unknown) => log.warn(`${spec.name}: lease renewal failed`, { err })), beatMs);
        state.heartbeat.unref();
        state.loop = claimLoop().catch((err: unknown) => log.error(`${spec.name}: queue loop stopped`, { err }));
      })().catch((error: unknown) => {
        state.started = null;
        throw error;
      });
      return state.started;
    },

    /** Whether this process claims rows (default yes); off, it only creates and follows them. */
    workHere(on: boolean): void {
      state.worksHere = on;
      if (on) wake();
    },

    wake,

    /** Cancel (the row is already ended): stop it here if this process works it — resolving once it stopped, 10 s at most — else tell every process. */
    async stopEverywhere(id: number): Promise<void> {
      const local = state.working.get(id);
      if (stopLocal(id, "cancel") && local) {
        await Promise.race([local.finished, new Promise((r) => setTimeout(r, 10_000).unref())]);
        return;
      }
      if (dialect.queuesRuns) await send(spec.channels.cancel, id);
    },

    /** Whether this process works the row. */
    worksHere: (id: number): boolean => state.working.has(id),

    /** Resolves when this process has stopped working the row (tests; a cancel's answer). */
    async finishedHere(id: number): Promise<void> {
      await state.working.get(id)?.finished;
    },

    /**
     * Shutdown: claim nothing more, let the work in flight finish for `graceMs` (told it is draining), then
     * abort the rest (stop "drain"; their work gives the rows back) and stop hearing the channels.
     */
    async drain(graceMs: number): Promise<{ given_back: number }> {
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
    },
  };
}
