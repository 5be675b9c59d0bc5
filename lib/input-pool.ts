/**
 * The input pool: work whose cost grows with what a caller sent — reading an import (decompress, parse,
 * convert, validate) and decoding an OTLP export — runs on worker threads with a deadline, so the
 * request loop only moves bytes and answers. As with the check thread (lib/runner/check-thread.ts), a
 * task past its deadline has its thread stopped (a new one starts for the next task) and fails with a
 * 4xx naming the setting; other requests, a health read among them, answer meanwhile.
 *
 * INPUT_WORKERS threads at most, started when first needed and kept (unreferenced: they never hold the
 * process open); a task waits in a queue for a free thread, its deadline counted from when it starts.
 * The tasks themselves are listed in lib/input-worker.ts, the threads' entry; this module knows only
 * their names, so the modules that use the pool (lib/import, lib/api) do not import each other through it.
 * Where worker threads cannot start (a sandbox without them) the caller's in-process version runs, as before.
 */
import { Worker } from "node:worker_threads";
import { threadStopped } from "@/db/sqlite-write-gate";
import { getConfig } from "@/lib/config";
import { AppError, type ErrorCode, type ErrorDetail } from "@/lib/errors";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { sourceWorker } from "@/lib/source-worker";

/** What a task may be called with and answers (structured-clone data). */
export type InputTaskName = "checkUpload" | "fixWorks" | "decodeOtlp" | "ingestOtlp" | "spoolOtlp" | "storeSpooled";

/** Messages to and from a thread. */
export type ToInputThread = { id: number; task: InputTaskName; input: unknown };
export type FromInputThread =
  | { ready: true }
  /** A piece of a large output, sent ahead of it so that no one message takes long to receive (see `runOffLoop`). */
  | { id: number; part: unknown }
  /**
   * The caller-sized part of the task is done and the rest is not timed by its deadline (an OTLP export
   * decoded, its spans being stored: that waits for SQLite's writer, which is not the caller's doing).
   */
  | { id: number; untimed: true }
  | { id: number; ok: true; output: unknown }
  | { id: number; ok: false; error: { app?: { code: ErrorCode; details: ErrorDetail[]; status: number }; message: string } };

/** How long a task may run, and what to say when it runs longer. */
export type Deadline = {
  ms: number;
  /** The setting that holds `ms`, named in the error. */
  setting: string;
  /** What took too long, e.g. "Reading the file". */
  what: string;
  /** The status of the refusal: 422 unless the caller says otherwise. */
  code?: ErrorCode;
};

type Job = {
  id: number;
  task: InputTaskName;
  input: unknown;
  deadline: Deadline;
  /** The same work in process, for where threads cannot start. */
  inline: () => unknown;
  /** The pieces sent ahead of the output, and how to put them back into it. */
  parts: unknown[];
  assemble?: (output: unknown, parts: unknown[]) => unknown;
  /** Work no caller waits on (the trace inbox's stores): see `runOffLoop`. */
  background: boolean;
  resolve: (output: unknown) => void;
  reject: (error: unknown) => void;
};

type Thread = { worker: Worker; ready: Promise<boolean>; loaded?: boolean; job?: Job; timer?: NodeJS.Timeout; dead?: boolean };

const state = processSingleton("input-pool", () => ({
  threads: [] as Thread[],
  queue: [] as Job[],
  nextId: 1,
  stoppedForTime: 0,
  /** Set once a thread could not be started: tasks run in process from then on. */
  unavailable: false,
}));

function bundledWorker(): Worker {
  return new Worker(new URL("./input-worker.ts", import.meta.url));
}

function startThread(): Thread | null {
  let worker: Worker;
  try {
    worker = process.env.NEXT_RUNTIME ? bundledWorker() : sourceWorker(import.meta.url, "input-pool.ts", "input-worker.ts");
  } catch (error) {
    log.warn("input pool unavailable: imports and exports are read in process", { reason: (error as Error).message });
    return null;
  }
  let loaded!: (ok: boolean) => void;
  const thread: Thread = { worker, ready: new Promise<boolean>((resolve) => (loaded = resolve)) };
  worker.unref();
  worker.on("message", (message: FromInputThread) => {
    if ("ready" in message) {
      thread.loaded = true;
      return loaded(true);
    }
    const job = thread.job;
    if (!job || message.id !== job.id) return;
    if ("part" in message) {
      job.parts.push(message.part);
      return;
    }
    if ("untimed" in message) {
      clearTimeout(thread.timer);
      thread.timer = undefined;
      return;
    }
    finish(thread);
    if (message.ok) {
      try {
        job.resolve(job.assemble ? job.assemble(message.output, job.parts) : message.output);
      } catch (error) {
        job.reject(error);
      }
    } else {
      const { app, message: text } = message.error;
      job.reject(app ? new AppError(app.code, text, app.details, app.status) : new Error(text));
    }
    dispatch();
  });
  const lost = (reason: string) => {
    loaded(false);
    thread.dead = true;
    state.threads = state.threads.filter((t) => t !== thread);
    const job = thread.job;
    if (job && !thread.loaded) {
      // It never started (no tsx, a sandbox): this job and every later one run in process.
      finish(thread);
      log.warn("input pool unavailable: imports and exports are read in process", { reason });
      state.unavailable = true;
      state.queue.unshift(job);
    } else if (job) {
      finish(thread);
      const memory = /out of memory|ERR_WORKER_OUT_OF_MEMORY/i.test(reason);
      job.reject(
        new AppError(
          job.deadline.code ?? "unprocessable",
          memory
            ? `${job.deadline.what} needed more memory than a worker thread has, and was stopped: send less at once`
            : `${job.deadline.what} stopped unexpectedly (${reason})`,
        ),
      );
    }
    dispatch();
  };
  // A thread stopped while it stored an export held SQLite's write gate: the server's writes need not wait for it.
  const threadId = worker.threadId;
  worker.on("error", (error) => lost(error.message));
  worker.on("exit", (code) => {
    threadStopped(threadId);
    lost(`exit ${code}`);
  });
  return thread;
}

function finish(thread: Thread): void {
  clearTimeout(thread.timer);
  thread.timer = undefined;
  thread.job = undefined;
  thread.worker.unref();
}

function timedOut(thread: Thread, job: Job): void {
  finish(thread);
  thread.dead = true;
  state.stoppedForTime++;
  state.threads = state.threads.filter((t) => t !== thread);
  void thread.worker.terminate();
  const { ms, setting, what, code } = job.deadline;
  const seconds = ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
  job.reject(
    new AppError(code ?? "unprocessable", `${what} took longer than its time limit of ${seconds} (${setting}) and was stopped: send less at once, or raise ${setting}`, [
      { path: "(body)", message: `took longer than ${ms} ms (${setting})` },
    ]),
  );
  dispatch();
}

function runInline(job: Job): void {
  try {
    job.resolve(job.inline());
  } catch (error) {
    job.reject(error);
  }
}

/**
 * The next job to start: the first a caller waits on, else the first background job while fewer than
 * INPUT_WORKERS - 1 threads (at least one) run background work, so one thread stays free for callers.
 */
function nextJob(): number {
  const waited = state.queue.findIndex((j) => !j.background);
  if (waited >= 0) return waited;
  const busy = state.threads.filter((t) => t.job?.background).length;
  return busy < Math.max(1, getConfig().INPUT_WORKERS - 1) ? 0 : -1;
}

/** Give queued jobs to idle threads, starting threads up to INPUT_WORKERS. */
function dispatch(): void {
  while (state.queue.length) {
    const at = nextJob();
    if (at < 0) return;
    let thread = state.threads.find((t) => !t.job && !t.dead);
    if (!thread) {
      if (state.unavailable) {
        runInline(state.queue.splice(at, 1)[0]);
        continue;
      }
      if (state.threads.length >= getConfig().INPUT_WORKERS) return;
      const started = startThread();
      if (!started) {
        state.unavailable = true;
        continue;
      }
      state.threads.push(started);
      thread = started;
    }
    const job = state.queue.splice(at, 1)[0];
    const chosen = thread;
    chosen.job = job;
    chosen.worker.ref();
    void chosen.ready.then((ok) => {
      // A thread that died while loading: its job was rejected by `lost`.
      if (!ok || chosen.job !== job) return;
      chosen.timer = setTimeout(() => timedOut(chosen, job), job.deadline.ms);
      chosen.worker.postMessage({ id: job.id, task: job.task, input: job.input } satisfies ToInputThread);
    });
  }
}

/**
 * Run `task` on the input pool within `deadline` (counted from when a thread starts it); rejects with
 * the task's own AppError, or a 4xx naming `deadline.setting` when it ran past it. `inProcess` is the same
 * work, run here only where threads cannot start. A task whose output is large sends it in pieces
 * (receiving one message is one uninterrupted copy on this thread: 400,000 messages at once held the loop
 * for a second); `assemble` puts them back. A `background` task (no caller waits on it) starts only when no
 * other task waits, and never on the last free thread.
 */
export function runOffLoop<T>(
  task: InputTaskName,
  input: unknown,
  deadline: Deadline,
  inProcess: () => T,
  assemble?: (output: unknown, parts: unknown[]) => T,
  opts: { background?: boolean } = {},
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    state.queue.push({
      id: state.nextId++,
      task,
      input,
      deadline,
      inline: inProcess,
      parts: [],
      assemble,
      background: opts.background ?? false,
      resolve: resolve as (output: unknown) => void,
      reject,
    });
    dispatch();
  });
}

/** How many tasks this process stopped for their deadline (tests, diagnostics). */
export function inputTasksStoppedForTime(): number {
  return state.stoppedForTime;
}

/** Stop every thread (tests, shutdown); the next task starts new ones. */
export async function stopInputPool(): Promise<void> {
  const threads = state.threads;
  state.threads = [];
  await Promise.all(threads.map((t) => ((t.dead = true), t.worker.terminate())));
}
