/**
 * The JSON-line events a test's child process prints on stdout (`{"event": "...", ...}` one a line; other
 * lines are its logs): collected as they come, each arrival told to `onArrival` (a waiter checks again).
 */
import type { ChildProcess } from "node:child_process";

export type ChildEvent = { event: string; [key: string]: unknown };

/** Call `onLine` with each whole line a child prints on stdout (the last, unterminated, waits for its end). */
export function onStdoutLines(proc: ChildProcess, onLine: (line: string) => void): void {
  let buffer = "";
  proc.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      onLine(line);
    }
  });
}

export function childEvents<E extends ChildEvent>(proc: ChildProcess, onArrival?: () => void): E[] {
  const events: E[] = [];
  onStdoutLines(proc, (line) => {
    try {
      const parsed = JSON.parse(line) as E;
      if (typeof parsed.event === "string") events.push(parsed);
    } catch {
      // A log line.
    }
  });
  // After the lines of a chunk are read (a listener added after the one above runs after it).
  proc.stdout!.on("data", () => onArrival?.());
  return events;
}
