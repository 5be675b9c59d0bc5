/**
 * The judge thread's entry (lib/judge/call-thread.ts starts it): it makes the provider calls — the AI
 * SDK's request building and reply parsing, and the HTTP — so that work stays off the server's event
 * loop, which answers readers and saves results meanwhile. One call per message, as many at once as
 * the server sends (its limiter decides that), each abortable by id.
 */
import { parentPort } from "node:worker_threads";
import { callModel, openAIChatModel } from "./call";
import { toWireError, type FromThread, type ToThread } from "./call-wire";

const port = parentPort;
if (!port) throw new Error("lib/judge/call-worker.ts runs as a worker thread");

const inFlight = new Map<number, AbortController>();

port.on("message", (message: ToThread) => {
  if (message.type === "abort") {
    inFlight.get(message.id)?.abort(new DOMException("The judge call was cancelled.", "AbortError"));
    return;
  }
  const controller = new AbortController();
  inFlight.set(message.id, controller);
  const model = openAIChatModel(message.baseURL, message.apiKey, message.model);
  callModel(model, message.turns, message.system, message.schema, message.timeoutMs, controller.signal).then(
    (result) => reply({ id: message.id, ok: true, result }),
    (error: unknown) => reply({ id: message.id, ok: false, error: toWireError(error) }),
  );
});

// Loaded: the server may count on the thread now (warmJudgeThread waits for this).
port.postMessage({ ready: true } satisfies FromThread);

type Reply = Exclude<FromThread, { ready: true }>;

function reply(message: Reply) {
  inFlight.delete(message.id);
  port!.postMessage(message);
}
