/** A bounded wait for something to end (a run, a generation), by reading it again until it has. */
import { z } from "zod";

/** Longest wait of one call: under the 60 s an MCP client waits for an answer by default. */
export const MAX_WAIT_SECONDS = 50;

export const waitSecondsArg = z
  .number()
  .min(0)
  .max(MAX_WAIT_SECONDS)
  .default(0)
  .describe(`Wait up to this many seconds (at most ${MAX_WAIT_SECONDS}) for it to end before answering; 0 answers at once`);

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });

/** `read()` again (every 100 ms, slowing to 1 s) until `ended` holds, `seconds` pass or the call is cancelled; the last read. */
export async function waitFor<T>(read: () => Promise<T>, ended: (value: T) => boolean, seconds: number, signal: AbortSignal): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  let value = await read();
  for (let pause = 100; !ended(value) && !signal.aborted && Date.now() < deadline; pause = Math.min(pause * 2, 1000)) {
    await sleep(Math.min(pause, deadline - Date.now()), signal);
    value = await read();
  }
  return value;
}
