/** Server-Sent Events: framing, headers and a heartbeat, over a web ReadableStream. */
export type SseMessage = { event?: string; id?: string | number; data: unknown };

const encoder = new TextEncoder();

export function formatSse(message: SseMessage): string {
  let out = "";
  if (message.event) out += `event: ${message.event}\n`;
  if (message.id !== undefined) out += `id: ${message.id}\n`;
  out += `data: ${JSON.stringify(message.data)}\n\n`;
  return out;
}

export const HEARTBEAT_MS = 15_000;

/** How often a stream checks its caller's credential again when nothing in this process said it changed (another process may have revoked it). */
export const RECHECK_MS = 30_000;

/** A stream's credential check: false ends the stream. */
export type StreamGuard = { stillAuthorized: () => Promise<boolean>; epoch: () => number };

export type SseWriter = { send: (m: SseMessage) => void; close: () => void; closed: () => boolean };

/**
 * A `text/event-stream` Response. `start` runs when the stream is created and returns (or resolves to) a
 * cleanup for when the stream ends or the client goes away. A comment line every 15 s keeps proxies
 * from closing an idle stream.
 */
export function sseResponse(start: (writer: SseWriter) => (() => void) | Promise<() => void>, heartbeatMs = HEARTBEAT_MS, guard?: StreamGuard): Response {
  let cleanup: (() => void) | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let guardTimer: ReturnType<typeof setInterval> | undefined;
  let done = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const finish = () => {
        if (done) return;
        done = true;
        if (timer) clearInterval(timer);
        if (guardTimer) clearInterval(guardTimer);
        cleanup?.();
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      };
      const writer: SseWriter = {
        send: (m) => {
          if (done) return;
          try {
            controller.enqueue(encoder.encode(formatSse(m)));
          } catch {
            finish();
          }
        },
        close: finish,
        closed: () => done,
      };
      controller.enqueue(encoder.encode(": stream open\n\n"));
      timer = setInterval(() => {
        if (done) return;
        try {
          controller.enqueue(encoder.encode(": heartbeat\n\n"));
        } catch {
          finish();
        }
      }, heartbeatMs);
      if (guard) {
        // A key revoked or a session ended after the stream opened ends it: at once when this process did
        // it (the epoch moved), within RECHECK_MS when another process did.
        let seen = guard.epoch();
        let checked = Date.now();
        let checking = false;
        guardTimer = setInterval(() => {
          if (done || checking || (guard.epoch() === seen && Date.now() - checked < RECHECK_MS)) return;
          checking = true;
          seen = guard.epoch();
          checked = Date.now();
          guard.stillAuthorized().then(
            (ok) => {
              checking = false;
              if (!ok) finish();
            },
            () => finish(),
          );
        }, 1000);
        guardTimer.unref?.();
      }
      const started = start(writer);
      const adopt = (c: () => void) => {
        cleanup = c;
        if (done) c();
      };
      if (started instanceof Promise) {
        // A start that reads first (the snapshot of an execution) ends the stream if the read fails.
        started.then(adopt, () => finish());
      } else adopt(started);
    },
    cancel() {
      done = true;
      if (timer) clearInterval(timer);
      if (guardTimer) clearInterval(guardTimer);
      cleanup?.();
    },
  });
  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
}
