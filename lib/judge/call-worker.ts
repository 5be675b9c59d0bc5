/**
 * The judge thread's entry (lib/judge/call-thread.ts starts it): it makes the provider calls — the AI
 * SDK's request building and reply parsing, and the HTTP — so that work stays off the server's event
 * loop, which answers readers and saves results meanwhile. One call per message, as many at once as
 * the server sends (its limiter decides that), each abortable by id.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { parentPort } from "node:worker_threads";
import { callModel, openAIChatModel, startCall } from "./call";
import { toWireError, type FromThread, type ToThread } from "./call-wire";

const port = parentPort;
if (!port) throw new Error("lib/judge/call-worker.ts runs as a worker thread");

/** Each call in flight's abort, by id. */
const inFlight = new Map<number, (reason: unknown) => void>();

port.on("message", (message: ToThread) => {
  if (message.type === "abort") {
    inFlight.get(message.id)?.(new DOMException("The judge call was cancelled.", "AbortError"));
    return;
  }
  const model = openAIChatModel(message.baseURL, message.apiKey, message.model);
  const call = startCall(model, message.turns, message.system, message.schema, message.timeoutMs);
  inFlight.set(message.id, call.abort);
  call.result.then(
    (result) => reply({ id: message.id, ok: true, result }),
    (error: unknown) => reply({ id: message.id, ok: false, error: toWireError(error) }),
  );
});

/**
 * Before the first run: a few rounds of calls to a provider stand-in on a loopback port of this thread's
 * own (a canned chat completion), so the first run's calls do not pay for cold code (the AI SDK's and
 * the HTTP client's first calls, the HTTP parser's compilation). Nothing leaves the machine; the
 * stand-in is closed before the thread reports ready.
 */
async function warmUp(): Promise<void> {
  const reply = JSON.stringify({
    id: "warm-up",
    object: "chat.completion",
    created: 0,
    model: "warm-up",
    choices: [{ index: 0, message: { role: "assistant", content: '{"score": 1}' }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(reply));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port: p } = server.address() as AddressInfo;
    const model = openAIChatModel(`http://127.0.0.1:${p}/v1`, "warm-up", "warm-up");
    const schema = { type: "object", properties: { score: { type: "number" } } };
    // Judge-sized messages (a few KB, as a metric prompt is) and enough rounds for V8 to optimise the
    // request and reply paths: with 4 rounds of one-word prompts the first served run's calls still
    // took ~1.5 ms longer on the thread than a later run's.
    const prompt = "warm-up ".repeat(400);
    const system = "warm-up ".repeat(100);
    for (let round = 0; round < 16; round++) {
      await Promise.all(Array.from({ length: 32 }, () => callModel(model, [{ role: "user", content: prompt }], system, schema, 5_000, undefined)));
    }
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

// Ready: the server may count on the thread now (warmJudgeThread waits for this). A failed warm-up
// only means a colder first run.
void warmUp()
  .catch(() => undefined)
  .then(() => port.postMessage({ ready: true } satisfies FromThread));

type Reply = Exclude<FromThread, { ready: true }>;

function reply(message: Reply) {
  inFlight.delete(message.id);
  port!.postMessage(message);
}
