/**
 * The check thread's entry (lib/runner/check-thread.ts starts it): runs check cells whose work can grow
 * with the text, one at a time, so the server's event loop keeps answering while one runs and the
 * server can stop this thread when a cell passes its time budget.
 */
import { parentPort } from "node:worker_threads";
import { prepareCheck, type CheckTree } from "@/lib/checks";
import type { CheckTask, FromCheckThread } from "./check-wire";

const port = parentPort;
if (!port) throw new Error("lib/runner/check-worker.ts runs as a worker thread");

let current: { key: number; tree: CheckTree } | undefined;
const prepared = new Map<string, ReturnType<typeof prepareCheck>>();

port.on("message", (task: CheckTask) => {
  let reply: FromCheckThread;
  try {
    if (task.tree) current = { key: task.treeKey, tree: task.tree };
    if (!current || current.key !== task.treeKey) throw new Error("the check thread lost the conversation it was sent");
    const key = `${task.level}|${JSON.stringify(task.spec)}`;
    let run = prepared.get(key);
    if (!run) {
      if (prepared.size >= 200) prepared.clear();
      run = prepareCheck(task.spec, task.level);
      prepared.set(key, run);
    }
    reply = { id: task.id, ok: true, outcome: run(current.tree, task.entity) };
  } catch (error) {
    reply = { id: task.id, ok: false, message: (error as Error).message };
  }
  port.postMessage(reply);
});

port.postMessage({ ready: true } satisfies FromCheckThread);
