/**
 * The check thread: check cells whose work can grow faster than their text, or with a user's pattern or
 * schema (regex, JSON, JSON Schema), run on a worker thread with a time budget when their conversation
 * holds more than a little text. On the event loop a `.{0,490}X` over a 1 MB message held every other
 * request for 16 s, `uniqueItems` over 30,000 items 16 s; here the server keeps answering, and a cell
 * past CHECK_TIMEOUT_MS has its thread stopped (a new one starts for the next cell) and fails saying so.
 *
 * One thread per process, one cell at a time; a conversation's tree is sent once for all its cells. If
 * the thread cannot start (a sandbox without worker threads) the cells run in process, as before.
 */
import { Worker } from "node:worker_threads";
import type { EvaluationLevel } from "@/lib/vocabulary";
import { getConfig } from "@/lib/config";
import { prepareCheck, type CheckEntity, type CheckOutcome, type CheckSpec, type CheckTree } from "@/lib/checks";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { sourceWorker } from "@/lib/source-worker";
import type { CheckTask, FromCheckThread } from "./check-wire";

/** Conversations with at most this many characters of text are checked in process: no check over them takes long. */
export const INLINE_TEXT_CHARS = 2000;

type Thread = { worker: Worker; ready: Promise<void>; treeKey?: number; reply?: (message: FromCheckThread) => void; gone?: (reason: string) => void };

const state = processSingleton("check-thread", () => ({
  thread: undefined as Thread | null | undefined,
  nextId: 1,
  tail: Promise.resolve() as Promise<unknown>,
  stoppedForTime: 0,
}));

const treeKeys = new WeakMap<object, number>();
let nextTreeKey = 1;
const sizes = new WeakMap<object, number>();

/** Characters of text in a conversation tree (strings, keys and numbers as written), counted once per tree. */
export function treeTextSize(tree: CheckTree): number {
  const known = sizes.get(tree);
  if (known !== undefined) return known;
  let size = 0;
  const stack: unknown[] = [tree];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") size += v.length;
    else if (typeof v === "number" || typeof v === "boolean") size += 4;
    else if (v && typeof v === "object") {
      for (const [k, child] of Object.entries(v)) {
        size += Array.isArray(v) ? 0 : k.length;
        stack.push(child);
      }
    }
  }
  sizes.set(tree, size);
  return size;
}

function bundledWorker(): Worker {
  return new Worker(new URL("./check-worker.ts", import.meta.url));
}

function startThread(): Thread | null {
  let worker: Worker;
  try {
    worker = process.env.NEXT_RUNTIME ? bundledWorker() : sourceWorker(import.meta.url, "check-thread.ts", "check-worker.ts");
  } catch (error) {
    log.warn("check thread unavailable: checks run in process", { reason: (error as Error).message });
    return null;
  }
  let loaded!: () => void;
  const thread: Thread = { worker, ready: new Promise<void>((resolve) => (loaded = resolve)) };
  worker.unref();
  worker.on("message", (message: FromCheckThread) => {
    if ("ready" in message) return loaded();
    thread.reply?.(message);
  });
  const lost = (reason: string) => {
    loaded();
    if (state.thread === thread) state.thread = undefined;
    thread.gone?.(reason);
  };
  worker.on("error", (error) => lost(error.message));
  worker.on("exit", (code) => lost(`exit ${code}`));
  return thread;
}

/** Stop the thread (tests, shutdown); the next check that needs it starts a new one. */
export async function stopCheckThread(): Promise<void> {
  const t = state.thread;
  state.thread = undefined;
  if (t) await t.worker.terminate();
}

/** How many cells this process stopped for their time budget (tests, diagnostics). */
export function checksStoppedForTime(): number {
  return state.stoppedForTime;
}

function onThread(thread: Thread, spec: CheckSpec, level: EvaluationLevel, tree: CheckTree, entity: CheckEntity): Promise<CheckOutcome> {
  let treeKey = treeKeys.get(tree);
  if (treeKey === undefined) treeKeys.set(tree, (treeKey = nextTreeKey++));
  const id = state.nextId++;
  const task: CheckTask = { id, spec, level, entity, treeKey, ...(thread.treeKey === treeKey ? {} : { tree }) };
  const budget = getConfig().CHECK_TIMEOUT_MS;
  return new Promise<CheckOutcome>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      thread.reply = undefined;
      thread.gone = undefined;
      thread.worker.unref();
    };
    const timer = setTimeout(() => {
      done();
      state.stoppedForTime++;
      if (state.thread === thread) state.thread = undefined;
      void thread.worker.terminate();
      reject(new AppError("unprocessable", `The check took longer than its time budget of ${budget} ms (CHECK_TIMEOUT_MS) over ${treeTextSize(tree).toLocaleString("en-US")} characters of text, and was stopped.`));
    }, budget);
    thread.reply = (message) => {
      if (!("id" in message) || message.id !== id) return;
      done();
      if (message.ok) resolve(message.outcome);
      else reject(new AppError("unprocessable", message.message));
    };
    thread.gone = (reason) => {
      done();
      reject(new AppError("unprocessable", `The check thread stopped while checking this cell (${reason}).`));
    };
    thread.worker.ref();
    thread.worker.postMessage(task);
    thread.treeKey = treeKey;
  });
}

/**
 * Check one cell on the check thread with CHECK_TIMEOUT_MS (cells run one after another, each budget
 * counted from its start); rejects with the reason when the cell passed its budget.
 */
export function checkOffLoop(spec: CheckSpec, level: EvaluationLevel, tree: CheckTree, entity: CheckEntity): Promise<CheckOutcome> {
  const next = state.tail.then(async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      if (state.thread === undefined) state.thread = startThread();
      const thread = state.thread;
      if (!thread) break;
      await thread.ready;
      if (state.thread === thread) return onThread(thread, spec, level, tree, entity);
      // It died while loading: start another once.
    }
    return prepareCheck(spec, level)(tree, entity);
  });
  state.tail = next.catch(() => undefined);
  return next;
}
