/**
 * A counting semaphore shared by every process of one PostgreSQL database, so a run's batch_size and a
 * model's concurrency limit hold across the cluster (the limit, not N processes × the limit).
 *
 * Each holder and each waiter is a row of turnscope_semaphore with a lease (expires_at). Waiters are
 * served in arrival order (a ticket), so nobody starves. A holder renews its lease every leaseMs/3
 * while it holds; a process that dies stops renewing and its rows are deleted once the lease has run
 * out, which frees the slot. A waiter's row has a short lease of its own (waitLeaseMs, a few seconds,
 * renewed every second by its living process): a dead process's waiters stand in line ahead of the
 * living ones, and holding their places for a holder's lease stalled every other process of a run for
 * that long (issue 22: 57.6 s without progress at a 60 s lease). Sooner still: each row names the
 * backend pid of its process's listening connection (notify.ts, open as long as the process lives), and
 * a try drops the rows of pids PostgreSQL no longer has — a SIGKILLed process's slots and places free as
 * soon as its connections close, not after their leases (a process that held every slot of a run's
 * batch_size stalled the run for the whole lease; a lost host still waits out the leases). After the
 * listening connection comes back, the process names its new pid on its rows. One try is one call of a plpgsql function (one round trip) serialised per
 * key by a transaction-scoped advisory lock; a release deletes the row and NOTIFYs the key with the
 * waiters now first in line (as many as there are free slots, from the limit each row records), and only
 * those try again, wherever they are. (Before, it woke the first waiter of the key in every process: with
 * three processes 4.8 tries per slot taken, growing with the number of processes; now about two.) On a
 * short timer, one query per process and key keeps all its waiters' places in line (their leases) and the
 * first of them retries, so a lost notification (listener reconnecting) delays them by at most that long.
 *
 * The table and function are created at first use with plain SQL under an advisory lock (several
 * processes start at once), outside drizzle's migrations: they are coordination state, not data.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { getNotifier } from "@/lib/cluster/notify";
import { clusterPool, clusterTransaction, clusterUrl } from "@/lib/cluster/pool";

/**
 * This process's rows (holders and waiters) not removed yet, by database: a shutdown removes them all at
 * once (releaseAllHeld), so a restarted or another process does not wait out their leases — a run's
 * batch_size slots held by a SIGTERMed process stalled the run for its whole lease (the visibility
 * timeout) after a rolling restart.
 */
const liveRows = () => processSingleton("cluster.semaphore.live", () => new Map<string, Set<string>>());

/** How many tries (round trips of turnscope_semaphore_try) this process made: the cost of waiting in line. */
const stats = () => processSingleton("cluster.semaphore.stats", () => ({ tries: 0 }));
export function semaphoreTries(): number {
  return stats().tries;
}

/** Channel on which releases announce the freed key. */
export const semaphoreChannel = "turnscope_semaphore";
/**
 * Delete the rows of holders $1 and wake, per key, the waiters now first in line: as many as the key has
 * free slots (its rows' limit less those still holding; at least one). The statement reads the table as
 * it was before its DELETE, hence the released rows are left out by name. One row per key, with how many
 * rows of it were removed.
 */
const releaseSql = `
  WITH gone AS (DELETE FROM turnscope_semaphore WHERE holder = ANY($1::text[]) RETURNING key, slot_limit),
  freed AS (SELECT key, max(slot_limit) AS slot_limit, count(*)::int AS removed FROM gone GROUP BY key)
  SELECT f.removed, turnscope_semaphore_wake(f.key, greatest(1, coalesce(f.slot_limit, 1) - (
    SELECT count(*)::int FROM turnscope_semaphore h WHERE h.key = f.key AND h.holding AND h.holder <> ALL($1::text[]))), $1::text[])
  FROM freed f`;

/** Longest a waiter sleeps between tries when no release notification arrives. */
const maxPollMs = 1_000;
/** A waiter's lease (see the header): five renewals' worth, so a slow round trip does not lose a place. */
const defaultWaitLeaseMs = 5_000;
const schemaLockKey = 7_305_771_003; // arbitrary, fixed: "turnscope cluster semaphore schema"

const schemaSql = [
  `CREATE TABLE IF NOT EXISTS turnscope_semaphore (
     holder text PRIMARY KEY,
     key text NOT NULL,
     ticket bigserial NOT NULL,
     holding boolean NOT NULL DEFAULT false,
     expires_at timestamptz NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now(),
     owner_pid int
   )`,
  // Tables created before rows named their process's connection.
  "ALTER TABLE turnscope_semaphore ADD COLUMN IF NOT EXISTS owner_pid int",
  // Tables created before rows recorded their key's limit (a release names as many waiters as slots are free).
  "ALTER TABLE turnscope_semaphore ADD COLUMN IF NOT EXISTS slot_limit int",
  "CREATE INDEX IF NOT EXISTS turnscope_semaphore_key_idx ON turnscope_semaphore (key, holding, ticket)",
  // Wake the first p_count waiters of a key (not those named in p_except), in whichever process: NOTIFY
  // the key with their holders (at most 100: a payload is at most 8,000 bytes); nothing when none waits.
  `CREATE OR REPLACE FUNCTION turnscope_semaphore_wake(p_key text, p_count int, p_except text[])
   RETURNS void AS $$
   DECLARE
     next json;
   BEGIN
     SELECT json_agg(n.holder) INTO next FROM (
       SELECT w.holder FROM turnscope_semaphore w
       WHERE w.key = p_key AND NOT w.holding AND w.holder <> ALL(p_except)
       ORDER BY w.ticket LIMIT least(100, p_count)) n;
     IF next IS NOT NULL THEN
       PERFORM pg_notify('${semaphoreChannel}', json_build_object('key', p_key, 'next', next)::text);
     END IF;
   END
   $$ LANGUAGE plpgsql`,
  // One round trip per try: register or refresh the caller's row, drop expired leases of the key, and
  // take a slot when fewer than p_limit rows are holding or waiting ahead of the caller. A waiting row
  // is leased for p_wait_ms, a holding one for p_lease_ms; rows of a process whose connection
  // (owner_pid) PostgreSQL no longer has are dropped too. Returns the caller's ticket (its place in
  // line, > 0) while it waits; once it holds a slot, minus the slots still free after its own (≤ 0),
  // so a winner can tell its next in line to try too.
  `CREATE OR REPLACE FUNCTION turnscope_semaphore_try(p_key text, p_holder text, p_limit int, p_lease_ms int, p_wait_ms int, p_owner_pid int)
   RETURNS bigint AS $$
   DECLARE
     mine record;
     taken int;
   BEGIN
     PERFORM pg_advisory_xact_lock(hashtextextended('turnscope.semaphore:' || p_key, 0));
     DELETE FROM turnscope_semaphore t WHERE t.key = p_key AND (t.expires_at < clock_timestamp()
       OR (t.owner_pid IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = t.owner_pid)));
     INSERT INTO turnscope_semaphore AS s (holder, key, expires_at, owner_pid, slot_limit)
       VALUES (p_holder, p_key, clock_timestamp() + p_wait_ms * interval '1 millisecond', p_owner_pid, p_limit)
       ON CONFLICT (holder) DO UPDATE SET expires_at = clock_timestamp()
         + (CASE WHEN s.holding THEN p_lease_ms ELSE p_wait_ms END) * interval '1 millisecond', owner_pid = p_owner_pid
       RETURNING s.holding, s.ticket INTO mine;
     IF mine.holding THEN
       RETURN 0;
     END IF;
     SELECT count(*) INTO taken FROM turnscope_semaphore
       WHERE key = p_key AND (holding OR ticket < mine.ticket);
     IF taken < p_limit THEN
       UPDATE turnscope_semaphore SET holding = true, expires_at = clock_timestamp() + p_lease_ms * interval '1 millisecond'
         WHERE holder = p_holder;
       -- Slots still free after ours (several released at once, a dead process's rows dropped): the
       -- waiters next in line, in any process, are told to try now rather than at their next timer.
       IF taken + 1 < p_limit THEN
         PERFORM turnscope_semaphore_wake(p_key, p_limit - taken - 1, '{}');
       END IF;
       RETURN taken + 1 - p_limit;
     END IF;
     RETURN mine.ticket;
   END
   $$ LANGUAGE plpgsql`,
];

type SchemaState = Map<string, Promise<void>>;
const schemaState = () => processSingleton<SchemaState>("cluster.semaphore.schema", () => new Map());

/** Create the semaphore's table and function once per process and database. */
export function ensureSemaphoreSchema(url: string): Promise<void> {
  const state = schemaState();
  let ready = state.get(url);
  if (!ready) {
    ready = createSchema(clusterPool(url));
    state.set(url, ready);
    ready.catch(() => state.delete(url));
  }
  return ready;
}

async function createSchema(pool: pg.Pool): Promise<void> {
  await clusterTransaction(pool, async (client) => {
    // CREATE … IF NOT EXISTS still races on the catalog when two sessions run it at once.
    await client.query("SELECT pg_advisory_xact_lock($1)", [schemaLockKey]);
    for (const statement of schemaSql) await client.query(statement);
  });
}

/** Releases the slot (idempotent). `lost` aborts if the lease could not be renewed and ran out. */
export type SemaphoreRelease = (() => Promise<void>) & { readonly lost: AbortSignal };

export type AcquireOptions = {
  /** How long a slot outlives a holder that stops renewing it (a dead process). Default 30 s. */
  leaseMs?: number;
  /**
   * How long a place in line outlives a waiter that stops renewing it (a dead process). Default 5 s
   * (at most leaseMs); its process renews it every second while it waits.
   */
  waitLeaseMs?: number;
  signal?: AbortSignal;
  /** Database; DATABASE_URL when absent. */
  url?: string;
};

type Waiter = { holder: string; ticket: number; pending: boolean; wake: () => void };
type Waiters = Map<string, Set<Waiter>>;
type WakeState = { subscribed: Map<string, Promise<unknown>>; waiters: Waiters; keepers: Map<string, { set: Set<Waiter>; timer: NodeJS.Timeout }> };
const wakeState = () =>
  processSingleton<WakeState>("cluster.semaphore.wake", () => ({ subscribed: new Map(), waiters: new Map(), keepers: new Map() }));

/** Take a waiter out of this process's line for `key`. */
function forget(state: WakeState, key: string, set: Set<Waiter>, waiter: Waiter): void {
  set.delete(waiter);
  if (set.size === 0 && state.waiters.get(key) === set) state.waiters.delete(key);
}

function firstInLine(set: Iterable<Waiter>): Waiter | null {
  let first: Waiter | null = null;
  for (const waiter of set) if (!waiter.pending && (!first || waiter.ticket < first.ticket)) first = waiter;
  return first;
}

/**
 * While this process has waiters for a key: every `everyMs`, one query keeps all their places in line
 * (their rows' leases), and the first of them tries again in case a release notification was lost.
 * Before, every waiter re-tried on its own timer to keep its lease: with a hundred cells of a batch
 * waiting in each process, those tries queued on the few coordination connections and behind the key's
 * lock, a waiter's lease could run out before its turn to renew it came, and its row was replaced at
 * the back of the line — over and over, so one process's cells could wait out a whole run.
 */
function keepPlaces(pool: pg.Pool, key: string, set: Set<Waiter>, leaseMs: number, everyMs: number) {
  const state = wakeState();
  const current = state.keepers.get(key);
  if (current?.set === set) return;
  if (current) clearInterval(current.timer);
  const timer = setInterval(() => {
    if (set.size === 0 || state.waiters.get(key) !== set) {
      clearInterval(timer);
      if (state.keepers.get(key)?.timer === timer) state.keepers.delete(key);
      return;
    }
    const holders = [...set].map((w) => w.holder);
    pool
      .query("UPDATE turnscope_semaphore SET expires_at = clock_timestamp() + $2 * interval '1 millisecond' WHERE holder = ANY($1::text[]) AND NOT holding", [holders, leaseMs])
      .catch((err) => log.warn("semaphore: keeping waiters' places failed, will retry", { key, err }));
    firstInLine(set)?.wake();
  }, everyMs);
  timer.unref();
  state.keepers.set(key, { set, timer });
}

/** Subscribe this process once per database to release notifications; they wake local waiters of the key. */
function listenForReleases(url: string): Promise<unknown> {
  const state = wakeState();
  let subscribed = state.subscribed.get(url);
  if (!subscribed) {
    const notifier = getNotifier(url);
    const wakeAll = () => {
      for (const set of state.waiters.values()) for (const waiter of set) waiter.wake();
    };
    subscribed = notifier.subscribe(semaphoreChannel, (payload) => {
      // A process of an earlier version names only the key: wake our first in line that is not already about to try.
      if (typeof payload === "string") return void firstInLine(state.waiters.get(payload) ?? [])?.wake();
      const { key, next } = (payload ?? {}) as { key?: unknown; next?: unknown };
      const set = typeof key === "string" ? state.waiters.get(key) : undefined;
      if (!set || !Array.isArray(next)) return;
      // Slots freed: wake the waiters named first in line, if they are ours; the others' processes wake theirs.
      const named = new Set(next);
      for (const waiter of set) if (named.has(waiter.holder)) waiter.wake();
    });
    notifier.onReconnect(wakeAll);
    state.subscribed.set(url, subscribed);
    subscribed.catch(() => state.subscribed.delete(url));
  }
  return subscribed;
}

/**
 * The backend pid of this process's listening connection to `url` (see the header), asked once per
 * connection. When the connection comes back after a drop, this process's rows are given the new pid
 * (other processes may have dropped some meanwhile: their renewals then find them gone, as after a lost lease).
 */
function ownerPid(url: string): Promise<number> {
  const notifier = getNotifier(url);
  const owners = ownerState();
  let pid = owners.get(notifier);
  if (!pid) {
    pid = notifier.listenerPid();
    owners.set(notifier, pid);
    pid.catch(() => owners.delete(notifier));
    notifier.onReconnect(() => {
      const renewed = notifier.listenerPid();
      owners.set(notifier, renewed);
      renewed.catch(() => owners.delete(notifier));
      void renewed
        .then((newPid) =>
          clusterPool(url).query("UPDATE turnscope_semaphore SET owner_pid = $2 WHERE holder = ANY($1::text[])", [[...(liveRows().get(url) ?? [])], newPid]),
        )
        .catch((err: unknown) => log.warn("semaphore: could not name the new listening connection on this process's rows", { err }));
    });
  }
  return pid;
}
const ownerState = () => processSingleton("cluster.semaphore.owner", () => new WeakMap<object, Promise<number>>());

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException("The operation was aborted", "AbortError");
}

/**
 * Wait for one of `limit` slots of `key` across all processes and return its release function.
 * Rejects with the signal's reason if `signal` aborts while waiting (the place in line is given up).
 */
export async function acquire(key: string, limit: number, options: AcquireOptions = {}): Promise<SemaphoreRelease> {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`semaphore limit must be a positive integer, got ${limit}`);
  const leaseMs = Math.max(300, Math.round(options.leaseMs ?? 30_000));
  const waitLeaseMs = Math.max(300, Math.min(leaseMs, Math.round(options.waitLeaseMs ?? defaultWaitLeaseMs)));
  const { signal } = options;
  const url = clusterUrl(options.url);
  const pool = clusterPool(url);
  await ensureSemaphoreSchema(url);
  signal?.throwIfAborted();

  const holder = randomUUID();
  let rows = liveRows().get(url);
  if (!rows) liveRows().set(url, (rows = new Set()));
  rows.add(holder);
  const tryTake = async () => {
    const owner = await ownerPid(url);
    stats().tries++;
    const { rows } = await pool.query<{ ticket: string }>("SELECT turnscope_semaphore_try($1, $2, $3, $4, $5, $6)::text AS ticket", [
      key,
      holder,
      limit,
      leaseMs,
      waitLeaseMs,
      owner,
    ]);
    return Number(rows[0].ticket);
  };
  const remove = async () => {
    await pool.query(releaseSql, [[holder]]);
    rows.delete(holder);
  };

  // Listening, and in this process's line, before the first try: a release that names this holder while
  // the try is on its way is kept (`pending`, a wake-up not yet acted on) and acted on at once after it.
  await listenForReleases(url);
  const state = wakeState();
  let set = state.waiters.get(key);
  if (!set) state.waiters.set(key, (set = new Set()));
  let resolveWait: (() => void) | null = null;
  const waiter: Waiter = {
    holder,
    ticket: Number.POSITIVE_INFINITY,
    pending: false,
    wake: () => {
      waiter.pending = true;
      resolveWait?.();
    },
  };
  set.add(waiter);
  let ticket: number;
  try {
    ticket = await tryTake();
  } catch (err) {
    forget(state, key, set, waiter);
    throw err;
  }
  if (ticket <= 0) forget(state, key, set, waiter);
  else {
    waiter.ticket = ticket;
    keepPlaces(pool, key, set, waitLeaseMs, Math.min(maxPollMs, waitLeaseMs / 3));
    const nextTurn = () =>
      new Promise<void>((resolve, reject) => {
        // An abort that came while we queried fires no event again: go round once more, where the
        // loop's throwIfAborted() gives the place up (waiting would last until we were woken).
        if (waiter.pending || signal?.aborted) {
          waiter.pending = false;
          resolve();
          return;
        }
        // A release of this key, the keeper's timer (keepPlaces), or abort.
        function done() {
          resolveWait = null;
          waiter.pending = false;
          signal?.removeEventListener("abort", onAbort);
          resolve();
        }
        function onAbort() {
          done();
          reject(abortError(signal!));
        }
        resolveWait = done;
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    try {
      for (;;) {
        await nextTurn();
        signal?.throwIfAborted();
        ticket = await tryTake();
        if (ticket <= 0) break;
        if (ticket !== waiter.ticket) log.warn("semaphore: a waiter lost its place in line (its lease ran out while it waited)", { key });
        waiter.ticket = ticket;
      }
    } catch (err) {
      await remove().catch(() => undefined);
      throw err;
    } finally {
      // Slots still free after ours are passed on by the try itself (it names the next in line), and a
      // release names as many waiters as it frees: nothing to pass on from here.
      forget(state, key, set, waiter);
    }
  }

  const lost = new AbortController();
  let released = false;
  const renew = setInterval(() => {
    pool
      .query("UPDATE turnscope_semaphore SET expires_at = clock_timestamp() + $2 * interval '1 millisecond' WHERE holder = $1 AND holding", [
        holder,
        leaseMs,
      ])
      .then((res) => {
        if (res.rowCount === 0 && !released) {
          clearInterval(renew);
          log.warn("semaphore: lease ran out before it was renewed", { key });
          lost.abort(new Error(`semaphore lease of "${key}" ran out`));
        }
      })
      .catch((err) => log.warn("semaphore: lease renewal failed, will retry", { key, err }));
  }, leaseMs / 3);
  renew.unref();

  const release = async () => {
    if (released) return;
    released = true;
    clearInterval(renew);
    await remove();
  };
  return Object.assign(release, { lost: lost.signal });
}

/**
 * Remove every row this process still has (at shutdown, once its batches are given back): the slots
 * are free at once and each key's next waiter is woken, instead of after the rows' leases. A release
 * still on its way afterwards deletes nothing. Returns how many rows were removed.
 */
export async function releaseAllHeld(): Promise<number> {
  let removed = 0;
  for (const [url, rows] of liveRows()) {
    if (rows.size === 0) continue;
    const holders = [...rows];
    rows.clear();
    const res = await clusterPool(url).query<{ removed: number }>(releaseSql, [holders]);
    for (const row of res.rows) removed += row.removed;
  }
  return removed;
}

/** Holders of `key` right now (tests, diagnostics). */
export async function semaphoreHolders(key: string, url?: string): Promise<number> {
  const chosen = clusterUrl(url);
  await ensureSemaphoreSchema(chosen);
  const { rows } = await clusterPool(chosen).query<{ n: number }>(
    "SELECT count(*)::int AS n FROM turnscope_semaphore WHERE key = $1 AND holding AND expires_at >= clock_timestamp()",
    [key],
  );
  return rows[0].n;
}
