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
import { jobController, leaseMs } from "./lease";

/** Why the work of a claimed row is told to stop: cancelled (anywhere), shutting down, or its claim was lost. */
export type ClaimStop = "cancel" | "drain" | "lost";

/** A claimed row's key: one claim of one row (a row claimed again while an earlier claim's work still unwinds gets a key of its own). */
export type ClaimKey = number | string;

/** How a claim queue's rows are claimed, renewed and freed (its repository). Times are ISO strings. */
export interface ClaimStore<Row extends { id: ClaimKey }> {
  /** Claim up to `limit` rows no live owner holds (oldest first) for `owner` until `leaseUntil`, counting an attempt on each; none when there are none. */
  claim(owner: string, now: string, leaseUntil: string, maxAttempts: number, limit: number): Promise<Row[]>;
  /** Move the lease of the rows `owner` still holds among `ids`; the ids it still holds (a cancelled or lost one is not among them). */
  renew(owner: string, ids: Row["id"][], leaseUntil: string): Promise<Set<Row["id"]>>;
  /** End failed, with `message`, the rows no live owner holds that were claimed `maxAttempts` times; their ids. */
  failExhausted(now: string, maxAttempts: number, message: string): Promise<Row["id"][]>;
  /** A single-process store at start-up: free every claim of another owner (it is a dead process's); how many. */
  releaseDead(owner: string): Promise<number>;
  /** Whether the row was ended cancelled (or is no longer this claim's): a renewal that no longer holds it tells a cancel from a lost claim. */
  cancelled(id: Row["id"]): Promise<boolean>;
}

/** What the work of one claimed row is handed. */
export type ClaimContext<Key extends ClaimKey = ClaimKey> = {
  id: Key;
  /** This process's owner name, as the row's claim says it (the work writes only while the claim is its own). */
  owner: string;
  /** Aborted when the row is cancelled (from any process), its claim is lost, or the process stops: every call listens on it. */
  signal: AbortSignal;
  /** Why it was told to stop, once it was. */
  stopKind(): ClaimStop | null;
  /** The process is shutting down: start nothing new, finish what is in flight (then give the row back). */
  draining(): boolean;
};

export type ClaimQueueSpec<Row extends { id: ClaimKey }> = {
  /** The kind's name as logs say it ("generation"); the queue's process state is `<name>.queue`. */
  name: string;
  store: ClaimStore<Row>;
  /** Claims lost (the process died holding it) before a row is failed rather than claimed again. */
  maxAttempts: number;
  /** What a row failed after `maxAttempts` lost claims says. */
  exhausted: string;
  /** Work one claimed row to its end (or until told to stop; a drained one gives its row back). */
  work(row: Row, job: ClaimContext<Row["id"]>): Promise<void>;
  /** The work threw: end the row failed (only while `owner` holds it). Errors are logged, not thrown. */
  failed(row: Row, owner: string, error: Error): Promise<void>;
  /** Say the row changed (claimed, failed): followers read it. */
  announce(id: Row["id"]): void;
  /** NOTIFY channels (shared store only): `wake` a row was created or given back, `cancel` a row (its id) was cancelled. */
  channels: { wake: string; cancel: string };
  /** Whether a cancel heard on the channel (its payload) stops `row` (default: the payload is the row's id). */
  cancels?: (row: Row, payload: unknown) => boolean;
  /** How many rows this process works at once (default WORKER_CONCURRENCY). */
  capacity?: () => number;
  /** How long an idle loop waits before looking again without a wake-up (default 2 s). */
  idlePollMs?: number | (() => number);
  /** The length of a claim's lease in ms (default JOB_VISIBILITY_TIMEOUT_SECONDS): renewed every third of it. */
  leaseMs?: () => number;
  /** Whether other processes share the store (NOTIFY, no dead claims freed at start-up); default: the store's dialect says. */
  shared?: boolean;
  /** The PostgreSQL database whose NOTIFY channels it uses (default DATABASE_URL). */
  notifyUrl?: () => string | undefined;
};

type Working = { row: unknown; controller: AbortController; stop: ClaimStop | null; draining: boolean; finished: Promise<void> };
type QueueState = {
  owner: string;
  /** False in a process that only creates and follows rows (tests of the cluster, a process of the API alone). */
  worksHere: boolean;
  started: Promise<void> | null;
  stopping: boolean;
  working: Map<ClaimKey, Working>;
  /** Cancels heard on the channel, by payload, and when: a claim in flight then may return a row the cancel missed. */
  cancelsHeard: Map<unknown, number>;
  wake: (() => void) | null;
  woken: boolean;
  loop: Promise<void> | null;
  heartbeat: NodeJS.Timeout | null;
  unsubscribe: Array<() => Promise<void>>;
};

const iso = (ms: number) => new Date(ms).toISOString();
const stopMessage: Record<ClaimStop, string> = { cancel: "cancelled", lost: "its claim was lost", drain: "shutting down" };

export type ClaimQueue<Row extends { id: ClaimKey } = { id: number }> = ReturnType<typeof defineClaimQueue<Row>>;

/** Register a claim queue once; what it returns starts, wakes, cancels and drains this process's part of it. */
/** Cancels heard are remembered this long for the claim race (a claim in flight takes less). */
const cancelMemoryMs = 60_000;

export function defineClaimQueue<Row extends { id: ClaimKey }>(spec: ClaimQueueSpec<Row>) {
  const state = processSingleton<QueueState>(`${spec.name}.queue`, () => ({
    owner: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    worksHere: true,
    started: null,
    stopping: false,
    working: new Map(),
    cancelsHeard: new Map(),
    wake: null,
    woken: false,
    loop: null,
    heartbeat: null,
    unsubscribe: [],
  }));
  const capacity = spec.capacity ?? (() => getConfig().WORKER_CONCURRENCY);
  const idlePollMs = (): number => (typeof spec.idlePollMs === "function" ? spec.idlePollMs() : (spec.idlePollMs ?? 2_000));
  const lease = spec.leaseMs ?? leaseMs;
  const shared = () => spec.shared ?? dialect.queuesRuns;
  const cancels = spec.cancels ?? ((row: Row, payload: unknown) => payload === row.id);

  const onChannel = async (channel: string, listener: (payload: unknown) => void): Promise<() => Promise<void>> =>
    shared() ? subscribe(channel, listener, spec.notifyUrl?.()) : async () => undefined;
  const send = async (channel: string, payload: ClaimKey | null): Promise<void> => {
    await publish(channel, payload, spec.notifyUrl?.()).catch((err: unknown) => log.warn(`${spec.name}: notification not sent`, { channel, err }));
  };

  /** Look for work now, here and (broadcast, shared store) in every process. */
  function wake(broadcast = false): void {
    state.woken = true;
    state.wake?.();
    if (broadcast && shared()) void send(spec.channels.wake, null);
  }

  /** A cancel heard on the channel: stop the rows it names here, and remember it for a claim in flight. */
  function heardCancel(payload: unknown): void {
    const now = Date.now();
    for (const [p, at] of state.cancelsHeard) if (now - at > cancelMemoryMs) state.cancelsHeard.delete(p);
    state.cancelsHeard.set(payload, now);
    for (const [id, w] of state.working) if (cancels(w.row as Row, payload)) stopLocal(id, "cancel");
  }

  /**
   * A cancel heard while a claim was in flight (since `from`) found its row not yet claimed here, so it
   * stopped nothing: ask the store (only in that race) rather than work a cancelled row until the next renewal.
   */
  async function cancelledMeanwhile(row: Row, from: number): Promise<boolean> {
    for (const [payload, at] of state.cancelsHeard) if (at >= from && cancels(row, payload)) return spec.store.cancelled(row.id);
    return false;
  }

  /** Stop a row this process works: its calls are aborted at once. */
  function stopLocal(id: ClaimKey, kind: ClaimStop): boolean {
    const w = state.working.get(id);
    if (!w) return false;
    w.stop ??= kind;
    w.controller.abort(new Error(stopMessage[kind]));
    return true;
  }

  function launch(row: Row): void {
    const controller = jobController();
    const entry: Working = { row, controller, stop: null, draining: false, finished: Promise.resolve() };
    state.working.set(row.id, entry);
    spec.announce(row.id);
    const job: ClaimContext<Row["id"]> = { id: row.id, owner: state.owner, signal: controller.signal, stopKind: () => entry.stop, draining: () => entry.draining };
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
          const limit = room - state.working.size;
          const from = Date.now();
          const rows = await spec.store.claim(state.owner, iso(from), iso(from + lease()), spec.maxAttempts, limit);
          for (const row of rows) {
            if (await cancelledMeanwhile(row, from)) continue;
            launch(row);
            // Claimed as the process began to drain: it goes back at once (its work sees the stop).
            if (state.stopping) stopLocal(row.id, "drain");
          }
          // Fewer than asked: none are left for now.
          if (rows.length < limit) break;
        }
      } catch (err) {
        log.warn(`${spec.name}: claiming failed; trying again`, { err });
      }
      if (state.woken || state.stopping) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, idlePollMs());
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
    // Rows already told to stop are not renewed: they unwind, and a drained one is given back.
    const ids = [...state.working].filter(([, w]) => w.stop === null).map(([id]) => id as Row["id"]);
    if (ids.length === 0) return;
    const kept = await spec.store.renew(state.owner, ids, iso(Date.now() + lease()));
    for (const id of ids) {
      if (kept.has(id)) continue;
      stopLocal(id, (await spec.store.cancelled(id)) ? "cancel" : "lost");
    }
  }

  /** Listen to a channel (shared store); false, logged, when that failed. */
  async function listenTo(channel: string, listener: (payload: unknown) => void, attempt: number): Promise<boolean> {
    try {
      const unsubscribe = await onChannel(channel, listener);
      if (state.stopping) await unsubscribe().catch(() => undefined);
      else state.unsubscribe.push(unsubscribe);
      return true;
    } catch (err) {
      log.warn(`${spec.name}: could not listen on ${channel}; claiming by polling meanwhile, trying again`, { attempt, err });
      return false;
    }
  }

  /** Try listening again, more slowly each time (at most every 30 s), until it works or the process drains. */
  async function keepTrying(channel: string, listener: (payload: unknown) => void): Promise<void> {
    for (let attempt = 2; !state.stopping; attempt++) {
      await new Promise((r) => setTimeout(r, Math.min(idlePollMs() * attempt, 30_000)).unref());
      if (state.stopping || (await listenTo(channel, listener, attempt))) return;
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
        if (!shared()) await spec.store.releaseDead(state.owner);
        // Wake-ups and cancels only speed things up (the loop polls, the renewal finds cancels): a channel
        // that cannot be listened to now is tried again in the background, and claiming starts regardless.
        for (const [channel, listener] of [
          [spec.channels.wake, () => wake()],
          [spec.channels.cancel, heardCancel],
        ] as const) {
          if (!(await listenTo(channel, listener, 1))) void keepTrying(channel, listener);
        }
        const beatMs = Math.max(250, Math.min(10_000, lease() / 3));
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
    async stopEverywhere(id: Row["id"]): Promise<void> {
      const local = state.working.get(id);
      if (stopLocal(id, "cancel") && local) {
        await Promise.race([local.finished, new Promise((r) => setTimeout(r, 10_000).unref())]);
        return;
      }
      if (shared()) await send(spec.channels.cancel, id);
    },

    /** Whether this process works the row. */
    worksHere: (id: Row["id"]): boolean => state.working.has(id),

    /** Resolves when this process has stopped working the row (tests; a cancel's answer). */
    async finishedHere(id: Row["id"]): Promise<void> {
      await state.working.get(id)?.finished;
    },

    /**
     * Shutdown: claim nothing more, let the work in flight finish for `graceMs` (told it is draining), then
     * abort the rest (stop "drain"; their work gives the rows back) and stop hearing the channels.
     */
    async drain(graceMs: number): Promise<{ finished: number; aborted: number }> {
      state.stopping = true;
      state.wake?.();
      // A claim in flight lands first: what it took is drained with the rest.
      await state.loop;
      const working = [...state.working.entries()];
      for (const [, w] of working) w.draining = true;
      const all = Promise.all(working.map(([, w]) => w.finished));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all, new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
      let aborted = 0;
      for (const [id] of working) if (stopLocal(id, "drain")) aborted++;
      await Promise.race([all, new Promise<void>((r) => setTimeout(r, 2_000).unref())]);
      if (state.heartbeat) clearInterval(state.heartbeat);
      await Promise.all(state.unsubscribe.splice(0).map((u) => u().catch(() => undefined)));
      return { finished: working.length - aborted, aborted };
    },

    /**
     * After a drain, let this process claim again on its next start() (a worker stopped and started again in
     * one process). Work the drain could not stop (a handler deaf to its signal) still counts against capacity
     * until it ends; it is not renewed (it was told to stop).
     */
    reopen(): void {
      if (!state.stopping) return;
      Object.assign(state, { stopping: false, started: null, loop: null, heartbeat: null, woken: false });
      state.cancelsHeard.clear();
    },
  };
}
