/** Web byte streams for route responses that pull their data only as fast as the client reads. */
import type { Readable } from "node:stream";

const encoder = new TextEncoder();

// Each pull must enqueue something or close: a pull that does neither is not called again, and the
// response would hang. Hence the loops past empty chunks.

/** A byte stream pulled from a generator of text: the next chunk is made only when the client wants it. */
export function textStream(chunks: Iterator<string> | AsyncIterator<string>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next = await chunks.next();
        if (next.done) return controller.close();
        if (next.value) return controller.enqueue(encoder.encode(next.value));
      }
    },
    cancel() {
      void chunks.return?.(undefined);
    },
  });
}

/** A web stream over a Node readable that keeps its backpressure; cancelling destroys the source. */
export function fromNodeReadable(readable: Readable): ReadableStream<Uint8Array> {
  const it: AsyncIterator<unknown> = readable[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next = await it.next();
        if (next.done) return controller.close();
        if (typeof next.value === "string" && next.value) return controller.enqueue(encoder.encode(next.value));
        if (next.value instanceof Uint8Array && next.value.byteLength) return controller.enqueue(next.value);
      }
    },
    cancel() {
      readable.destroy();
    },
  });
}
