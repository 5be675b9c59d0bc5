/**
 * SQLite lets one writer in at a time, and better-sqlite3 waits for it where the statement runs: a
 * write on the server's event loop that finds the database locked by another connection sleeps in
 * SQLite's busy handler, and every request waits with it. A thread that writes with a connection of
 * its own (the input pool storing an OTLP export's spans, db/sqlite-thread-store.ts) therefore holds
 * this gate while its transaction is open, and the server's writes (db/dialect/sqlite.ts) wait for the
 * gate asynchronously before they start, instead of for the lock on the loop.
 *
 * The gate is a few integers in shared memory (a SharedArrayBuffer handed to the threads with their
 * work): who holds it (0: nobody, -1: the server's thread, else the holding thread's id) and how many
 * of the server's writes are waiting. A thread that finds writes of the server waiting lets them go
 * first, once per transaction (they are short and synchronous; its transaction, one export's spans,
 * is tens of milliseconds), so an ingest that never stops cannot starve the run in progress.
 *
 * A holder that vanished (a thread stopped in its transaction: SQLite rolled it back as its connection
 * closed) is cleared by the first wait that outlasts STALE_MS; from then on writes meet SQLite's own
 * busy wait, as without the gate.
 */

const OWNER = 0;
const WAITING = 1;
/** The server's own thread, as the gate's holder (thread ids are 0 for it and positive for workers). */
const SERVER = -1;
/** A holder not seen to let go for this long is taken to be gone. */
const STALE_MS = 10_000;
/** How long a thread lets the server's waiting writes go first, at most, before it takes the gate anyway. */
const YIELD_MS = 20;

export type WriteGate = Int32Array;

const globalKey = Symbol.for("turnscope.sqliteWriteGate");
type GlobalWithGate = typeof globalThis & { [globalKey]?: WriteGate };

/** The process's gate, made when first needed (to hand to the threads that write). */
export function writeGate(): WriteGate {
  const g = globalThis as GlobalWithGate;
  return (g[globalKey] ??= new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT)));
}

/** The gate if a thread has been handed it (else there is nothing to wait for). */
function existingGate(): WriteGate | undefined {
  return (globalThis as GlobalWithGate)[globalKey];
}

/** True while a thread holds the gate: a write of the server's would wait for the database's lock. */
export function threadWriting(): boolean {
  const gate = existingGate();
  if (!gate) return false;
  const owner = Atomics.load(gate, OWNER);
  return owner !== 0 && owner !== SERVER;
}

/** Resolves once no thread holds the gate (at once when none does). */
export async function threadWritesDone(): Promise<void> {
  const gate = existingGate();
  if (!gate || !threadWriting()) return;
  Atomics.add(gate, WAITING, 1);
  try {
    for (;;) {
      const owner = Atomics.load(gate, OWNER);
      if (owner === 0 || owner === SERVER) return;
      const wait = Atomics.waitAsync(gate, OWNER, owner, STALE_MS);
      const outcome = wait.async ? await wait.value : wait.value;
      if (outcome === "timed-out") Atomics.compareExchange(gate, OWNER, owner, 0);
    }
  } finally {
    Atomics.sub(gate, WAITING, 1);
    Atomics.notify(gate, WAITING);
  }
}

/**
 * Run the server's synchronous write `work` holding the gate, so that no thread begins a transaction
 * meanwhile (it would find the lock taken and wait in SQLite's busy handler, on its own thread). Waits
 * first for a thread that holds it.
 */
export async function asServerWrite<T>(work: () => T): Promise<T> {
  const gate = existingGate();
  if (!gate) return work();
  for (;;) {
    if (threadWriting()) await threadWritesDone();
    const before = Atomics.compareExchange(gate, OWNER, 0, SERVER);
    // SERVER: a write of this thread already holds it (a write inside another's synchronous work).
    if (before === SERVER) return work();
    if (before !== 0) continue;
    try {
      return work();
    } finally {
      Atomics.store(gate, OWNER, 0);
      Atomics.notify(gate, OWNER);
    }
  }
}

/**
 * A thread stopped (a deadline, the pool closing): its connection closed and SQLite rolled back what it
 * had not committed, so the gate it may have held is free.
 */
export function threadStopped(id: number): void {
  const gate = existingGate();
  if (gate && Atomics.compareExchange(gate, OWNER, id, 0) === id) Atomics.notify(gate, OWNER);
}

/**
 * On a thread: take the gate as `holder` (its thread id), blocking this thread until it is free. When it
 * is free but writes of the server are waiting for it, they go first: this thread waits until none is
 * left, for YIELD_MS at most (once per call, so the server cannot hold it off for ever).
 */
export function holdWriteGate(gate: WriteGate, holder: number): void {
  let yielded = false;
  for (;;) {
    const owner = Atomics.load(gate, OWNER);
    if (owner !== 0) {
      if (Atomics.wait(gate, OWNER, owner, STALE_MS) === "timed-out") Atomics.compareExchange(gate, OWNER, owner, 0);
      continue;
    }
    if (!yielded && Atomics.load(gate, WAITING) > 0) {
      yielded = true;
      const until = performance.now() + YIELD_MS;
      for (let waiting = Atomics.load(gate, WAITING); waiting > 0 && performance.now() < until; waiting = Atomics.load(gate, WAITING)) {
        Atomics.wait(gate, WAITING, waiting, until - performance.now());
      }
      continue;
    }
    if (Atomics.compareExchange(gate, OWNER, 0, holder) === 0) return;
  }
}

/** On a thread: let go of the gate taken by `holdWriteGate`. */
export function releaseWriteGate(gate: WriteGate, holder: number): void {
  Atomics.compareExchange(gate, OWNER, holder, 0);
  Atomics.notify(gate, OWNER);
}
