/**
 * The judge thread: provider calls made on a worker thread instead of the server's event loop.
 *
 * Why: a served run is CPU-bound on one event loop. The AI SDK's request building and reply parsing
 * plus the HTTP exchange are about half of what a judged cell costs the server (profiles in
 * docs/performance.md); on that same loop they delay every other cell's result and every reader.
 * On the thread they run on the machine's other core. The server keeps everything else: the cache,
 * the limiter and its slots, retries and their waits, verdict checks, the writes and the events.
 *
 * One thread per process, started on first use (or at server start, `warmJudgeThread`). If it cannot
 * start — code bundled without it, a sandbox without worker threads — or it dies, calls go on in
 * process: a call that was in flight on a dead thread is made again in process (the provider may see
 * it twice; its verdict is stored once). JUDGE_THREAD=false keeps every call in process.
 */
import { Worker } from "node:worker_threads";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { sourceWorker } from "@/lib/source-worker";
import { callModel, openAIChatModel, type CallResult } from "./call";
import { fromWireError, type CallMessage, type FromThread, type ToThread } from "./call-wire";

export type ThreadCall = Omit<CallMessage, "type" | "id">;

type Pending = { call: ThreadCall; signal: AbortSignal | undefined; resolve: (r: CallResult) => void; reject: (e: unknown) => void; onAbort: () => void };
type Thread = { worker: Worker; pending: Map<number, Pending>; ready: Promise<void>; stopped?: boolean };

/**
 * One per process, not per module instance: Next.js loads this module once per route bundle (and once
 * for instrumentation.ts, which starts the thread), and they must all share the one thread.
 * thread — undefined: not started yet; null: unavailable in this process (calls run in process).
 * answered — calls the thread answered (result or provider error), for tests and diagnostics.
 */
const state = processSingleton("judge-thread", () => ({ thread: undefined as Thread | null | undefined, nextId: 1, answered: 0 }));

function inProcess(call: ThreadCall, signal: AbortSignal | undefined): Promise<CallResult> {
  return callModel(openAIChatModel(call.baseURL, call.apiKey, call.model), call.turns, call.system, call.schema, call.timeoutMs, signal);
}

/** In the Next.js build: the bundler sees this form and emits the worker's entry with its imports. */
function bundledWorker(): Worker {
  return new Worker(new URL("./call-worker.ts", import.meta.url));
}

function startThread(): Thread | null {
  let worker: Worker;
  try {
    worker = process.env.NEXT_RUNTIME ? bundledWorker() : sourceWorker(import.meta.url, "call-thread.ts", "call-worker.ts");
  } catch (error) {
    log.warn("judge thread unavailable: calls run in process", { reason: (error as Error).message });
    return null;
  }
  let loaded!: () => void;
  const started: Thread = { worker, pending: new Map(), ready: new Promise<void>((resolve) => (loaded = resolve)) };
  worker.unref();
  worker.on("message", (message: FromThread) => {
    if ("ready" in message) return loaded();
    const p = started.pending.get(message.id);
    if (!p) return; // cancelled meanwhile: its rejection has been delivered already
    settle(started, message.id, p);
    state.answered++;
    if (message.ok) p.resolve(message.result);
    else p.reject(fromWireError(message.error));
  });
  let gone = false;
  const lost = (reason: string) => {
    if (gone) return; // "error" is followed by "exit"
    gone = true;
    loaded();
    if (state.thread === started) state.thread = null;
    if (started.pending.size > 0 || (reason !== "exit 0" && !started.stopped)) log.warn("judge thread stopped: calls run in process", { reason, calls_moved_in_process: started.pending.size });
    for (const [id, p] of [...started.pending]) {
      settle(started, id, p);
      inProcess(p.call, p.signal).then(p.resolve, p.reject);
    }
  };
  worker.on("error", (error) => lost(error.message));
  worker.on("exit", (code) => lost(`exit ${code}`));
  return started;
}

function settle(t: Thread, id: number, p: Pending) {
  t.pending.delete(id);
  p.signal?.removeEventListener("abort", p.onAbort);
  // The thread keeps the process alive only while calls wait on it.
  if (t.pending.size === 0) t.worker.unref();
}

/**
 * Start the judge thread now (server start), so the first run does not wait for it; resolves once it
 * has loaded (or turned out unavailable).
 */
export async function warmJudgeThread(): Promise<void> {
  if (state.thread === undefined) state.thread = startThread();
  await state.thread?.ready;
}

/** How many calls the judge thread has answered in this process. */
export function judgeThreadCalls(): number {
  return state.answered;
}

/** Stop the thread (tests); the next call starts a new one. */
export async function stopJudgeThread(): Promise<void> {
  const t = state.thread;
  state.thread = undefined;
  if (!t) return;
  t.stopped = true; // terminate() ends it with exit code 1: not a failure worth a warning
  await t.worker.terminate();
}

/**
 * One provider call on the judge thread; the same contract as `callModel`: resolves with the reply,
 * rejects with the provider's error, the time-out, or — at once, without waiting for the thread — the
 * caller's abort reason.
 */
export function callOnThread(call: ThreadCall, signal: AbortSignal | undefined): Promise<CallResult> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (state.thread === undefined) state.thread = startThread();
  const t = state.thread;
  if (!t) return inProcess(call, signal);
  const id = state.nextId++;
  return new Promise<CallResult>((resolve, reject) => {
    const onAbort = () => {
      const p = t.pending.get(id);
      if (!p) return;
      settle(t, id, p);
      t.worker.postMessage({ type: "abort", id } satisfies ToThread);
      reject(signal?.reason);
    };
    if (t.pending.size === 0) t.worker.ref();
    t.pending.set(id, { call, signal, resolve, reject, onAbort });
    signal?.addEventListener("abort", onAbort, { once: true });
    t.worker.postMessage({ type: "call", id, ...call } satisfies ToThread);
  });
}

