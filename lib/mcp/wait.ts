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

/** How far a followed thing has got, as MCP progress says it (`total` 0: not known yet, left out). */
export type Progress = { done: number; total: number; message: string };

/**
 * `read()` again (every 100 ms, slowing to 1 s) until `ended` holds, `seconds` pass or the call is cancelled; the
 * last read. With `progress` (the client asked for it), each read that moved is told to the client as `measure` says it.
 */
export async function waitFor<T>(
  read: () => Promise<T>,
  ended: (value: T) => boolean,
  seconds: number,
  signal: AbortSignal,
  follow?: { progress?: (done: number, total?: number, message?: string) => Promise<void>; measure: (value: T) => Progress },
): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  let told = "";
  const tell = async (value: T) => {
    if (!follow?.progress) return;
    const p = follow.measure(value);
    const said = `${p.done}/${p.total} ${p.message}`;
    if (said === told) return;
    told = said;
    await follow.progress(p.done, p.total > 0 ? p.total : undefined, p.message);
  };
  let value = await read();
  await tell(value);
  for (let pause = 100; !ended(value) && !signal.aborted && Date.now() < deadline; pause = Math.min(pause * 2, 1000)) {
    await sleep(Math.min(pause, deadline - Date.now()), signal);
    value = await read();
    await tell(value);
  }
  return value;
}
