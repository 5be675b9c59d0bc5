/**
 * A client reading `GET /api/health` every 50 ms while something else is handled, as the reliability
 * suite does against a served app (scripts/reliability/bounds.ts): the health route is served over HTTP
 * from this process (route-server.ts) and read from a worker thread, a client with an event loop of its
 * own. A read sent while this process's loop is held waits for it, so the slowest read is how long a
 * real client waited. (Reads made in process would not show it: a request handled entirely in microtasks
 * never lets a timer fire, so no read is even sent while it runs.)
 */
import { Worker } from "node:worker_threads";
import * as health from "@/app/api/health/route";
import { serveRoutes } from "./route-server";

const pollerSource = `
const { parentPort, workerData } = require("node:worker_threads");
let stop = false;
let slowest = 0;
let reads = 0;
let failures = 0;
let baseline = 0;
parentPort.on("message", (m) => {
  if (m === "start") { baseline = slowest; slowest = 0; reads = 0; failures = 0; }
  else stop = true;
});
(async () => {
  while (!stop) {
    const t0 = performance.now();
    try {
      const res = await fetch(workerData.url);
      await res.arrayBuffer();
      if (res.status !== 200) failures++;
    } catch {
      failures++;
    }
    slowest = Math.max(slowest, performance.now() - t0);
    reads++;
    await new Promise((r) => setTimeout(r, 50));
  }
  parentPort.postMessage({ slowest, reads, failures, baseline });
})();
`;

/**
 * Run `act` while a client on another thread reads the health route every 50 ms. Returns the slowest
 * read (ms), how many reads were made and failed, and the longest the event loop went without turning.
 */
export async function whileReadingHealth<T>(act: () => Promise<T>): Promise<{ result: T; slowestReadMs: number; baselineSlowestMs: number; actMs: number; reads: number; failedReads: number; longestStallMs: number }> {
  const server = await serveRoutes({ "/api/health": health.GET }, { record: false });
  const poller = new Worker(pollerSource, { eval: true, workerData: { url: `${server.baseURL}/api/health` } });
  const polled = new Promise<{ slowest: number; reads: number; failures: number; baseline: number }>((resolve, reject) => {
    poller.once("message", resolve);
    poller.once("error", reject);
  });
  let last = performance.now();
  let longestStallMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longestStallMs = Math.max(longestStallMs, now - last);
    last = now;
  }, 20);
  try {
    // The first reads, before the act starts, say how long a read takes on this machine now (the baseline).
    await new Promise((r) => setTimeout(r, 400));
    poller.postMessage("start");
    const actStarted = performance.now();
    const result = await act();
    const actMs = performance.now() - actStarted;
    // A turn of the loop after the act, so a stall at its very end is counted too.
    await new Promise((r) => setTimeout(r, 150));
    poller.postMessage("stop");
    const { slowest, reads, failures, baseline } = await polled;
    return { result, slowestReadMs: Math.round(slowest), baselineSlowestMs: Math.round(baseline), actMs: Math.round(actMs), reads, failedReads: failures, longestStallMs: Math.round(longestStallMs) };
  } finally {
    clearInterval(ticker);
    await poller.terminate();
    await server.close();
  }
}

/**
 * How long a health read may take while hostile input is handled: 1 s (the bound), plus three times
 * the slowest read before the act on this machine now — or, for input whose handling takes long, 30 % of the
 * handling's time, whichever is more. At rest that is 1 s (an import held on the loop held it for ~80 % of its
 * handling: 2.5 of ~3 s); on a loaded machine (load 15 on 2 cores, where the input's own thread takes the
 * other core) the bound moves with the machine, while a loop held for most of the handling still fails it.
 * The served 1 s figure at rest is the reliability suite's (scripts/reliability/bounds.ts).
 */
export function healthReadBoundMs(seen: { baselineSlowestMs: number; actMs: number }): number {
  return Math.max(1000 + 3 * seen.baselineSlowestMs, 0.3 * seen.actMs);
}
