/**
 * The JSON-line events a test's child process prints on stdout (`{"event": "...", ...}` one a line; other
 * lines are its logs): collected as they come, each arrival told to `onArrival` (a waiter checks again).
 */
import type { ChildProcess } from "node:child_process";

export type ChildEvent = { event: string; [key: string]: unknown };

export function childEvents<E extends ChildEvent>(proc: ChildProcess, onArrival?: () => void): E[] {
  const events: E[] = [];
  let buffer = "";
  proc.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        const parsed = JSON.parse(line) as E;
        if (typeof parsed.event === "string") events.push(parsed);
      } catch {
        // A log line.
      }
    }
    onArrival?.();
  });
  return events;
}
