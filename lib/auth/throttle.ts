/**
 * Failed credentials per client address (a wrong sign-in, a wrong bearer token or key): after
 * MAX_FAILURES within the window the client is refused with 429 until the oldest failure leaves the
 * window, so a key cannot be guessed at speed. Per process; the address comes from the socket (or a
 * trusted proxy), never from a header the client chose.
 */
import { processSingleton } from "@/lib/process-state";

export const FAILURE_WINDOW_MS = 5 * 60_000;
export const MAX_FAILURES = 10;
/** Clients remembered at most; beyond it the oldest are forgotten (memory stays bounded under a flood of addresses). */
const MAX_CLIENTS = 50_000;

const failures = processSingleton("auth.failures", () => new Map<string, number[]>());

function recent(client: string, now: number): number[] {
  const list = (failures.get(client) ?? []).filter((t) => now - t < FAILURE_WINDOW_MS);
  if (list.length) failures.set(client, list);
  else failures.delete(client);
  return list;
}

/** Seconds this client must wait before trying a credential again, or 0. */
export function lockedFor(client: string, now = Date.now()): number {
  const list = recent(client, now);
  if (list.length < MAX_FAILURES) return 0;
  return Math.max(1, Math.ceil((list[list.length - MAX_FAILURES] + FAILURE_WINDOW_MS - now) / 1000));
}

export function recordFailure(client: string, now = Date.now()): void {
  const list = recent(client, now);
  list.push(now);
  failures.delete(client);
  failures.set(client, list);
  if (failures.size > MAX_CLIENTS) {
    const oldest = failures.keys().next().value;
    if (oldest !== undefined) failures.delete(oldest);
  }
}

export function clearFailures(client: string): void {
  failures.delete(client);
}

/** Forget every failure (tests only). */
export function resetThrottle(): void {
  failures.clear();
}
