/**
 * Readers first. One Node.js process serves the pages and API and runs evaluations on one event loop;
 * a fast judge lets a big run fill that loop with its own work (prompts, parsing, saving, events), and
 * every read then queues behind it: the load test's readers saw a p99 of 650–870 ms while a run went on.
 * A run is a background job and can wait a few milliseconds; a person at the page should not. So
 * requests are counted as they arrive, the loop's lag is sampled, and while requests are coming in and
 * the loop is behind, a run holds back its next cell (`yieldToRequests`) for a little while.
 */
import { processSingleton } from "@/lib/process-state";

const SAMPLE_MS = 10;
/** Lag above this, with requests arriving, makes runs hold back. */
const LAG_LIMIT_MS = 8;
/** "Requests coming in": at least BUSY_REQUESTS within RECENT_MS (16 a second) — a page polling once a
 * second, or a pipeline following its run, is not a crowd and never slows a run down. */
const RECENT_MS = 250;
const BUSY_REQUESTS = 4;
/** A cell never waits longer than this for the readers: runs slow down, they never stop. */
const MAX_HOLD_MS = 100;

const state = processSingleton("pressure", () => ({ lagMs: 0, arrivals: [] as number[], timer: undefined as ReturnType<typeof setInterval> | undefined }));

function ensureSampling(): void {
  if (state.timer) return;
  let expected = performance.now() + SAMPLE_MS;
  state.timer = setInterval(() => {
    const now = performance.now();
    const lag = Math.max(0, now - expected);
    // Smoothed, so one slow tick is not a trend.
    state.lagMs = 0.7 * state.lagMs + 0.3 * lag;
    expected = now + SAMPLE_MS;
  }, SAMPLE_MS);
  state.timer.unref?.();
}

/** Called by the route wrapper for every API request. */
export function noteRequest(): void {
  state.arrivals.push(performance.now());
  if (state.arrivals.length > BUSY_REQUESTS) state.arrivals.shift();
  ensureSampling();
}

export function underPressure(): boolean {
  const busy = state.arrivals.length === BUSY_REQUESTS && performance.now() - state.arrivals[0] < RECENT_MS;
  return busy && state.lagMs > LAG_LIMIT_MS;
}

/** Before a run starts its next cell: give waiting requests the loop first, for at most 100 ms. */
export async function yieldToRequests(): Promise<void> {
  ensureSampling();
  const deadline = performance.now() + MAX_HOLD_MS;
  while (underPressure() && performance.now() < deadline) await new Promise((r) => setTimeout(r, SAMPLE_MS));
}
