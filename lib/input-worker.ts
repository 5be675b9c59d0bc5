/**
 * The input pool's thread entry (lib/input-pool.ts starts it): runs one task at a time — an import's
 * checks, a suggested fix checked against the file, an OTLP export decoded, or decoded and its spans
 * stored (SQLite, with this thread's own connection) or put in the trace inbox, or an inbox file stored — and answers with its output or its error (an
 * AppError keeps its status and details). The host stops the thread when a task passes its deadline.
 */
import { parentPort } from "node:worker_threads";
import { AppError } from "@/lib/errors";
import { checkUpload, fixMakesValid, type CheckOptions } from "@/lib/import/check";
import { splitChecked } from "@/lib/import/checked-parts";
import type { SuggestedTransformation } from "@/lib/schemas/imports";
import { decodeExportBody, type ExportBody } from "@/lib/otel/decode";
import {
  spoolExportOnThread,
  storeExportOnThread,
  storeSpooledOnThread,
  type IngestTask,
  type SpoolTask,
  type StoreSpooledTask,
} from "@/lib/otel/store-export";
import type { FromInputThread, InputTaskName, ToInputThread } from "./input-pool";

const port = parentPort;
if (!port) throw new Error("lib/input-worker.ts runs as a worker thread");

/**
 * Each task: its input, `send` for pieces of a large output sent ahead of it, and `untimed` to say that
 * what is left of it is not timed by its deadline.
 */
const tasks: Record<InputTaskName, (input: never, send: (part: unknown) => void, untimed: () => void) => unknown> = {
  // The conversations go in pieces (lib/import/checked-parts.ts), the rest of the answer after them.
  checkUpload: (input: { bytes: Uint8Array; opts: CheckOptions }, send) => splitChecked(checkUpload(input.bytes, input.opts), send),
  fixWorks: (input: { text: string; transformation: SuggestedTransformation; opts: { maxBytes: number } }) => fixMakesValid(input.text, input.transformation, input.opts),
  decodeOtlp: (input: ExportBody) => decodeExportBody(input),
  // Decoded within OTEL_DECODE_TIMEOUT_MS; the store then waits for SQLite's writer as long as it takes.
  ingestOtlp: (input: IngestTask, _send, untimed) => storeExportOnThread(input, untimed),
  // Decoded within OTEL_DECODE_TIMEOUT_MS, then written to the trace inbox (lib/otel/inbox.ts); stored later by `storeSpooled`.
  spoolOtlp: (input: SpoolTask, _send, untimed) => spoolExportOnThread(input, untimed),
  storeSpooled: (input: StoreSpooledTask, _send, untimed) => storeSpooledOnThread(input, untimed),
};

port.on("message", (message: ToInputThread) => {
  let reply: FromInputThread;
  try {
    const send = (part: unknown) => port.postMessage({ id: message.id, part } satisfies FromInputThread);
    const untimed = () => port.postMessage({ id: message.id, untimed: true } satisfies FromInputThread);
    reply = { id: message.id, ok: true, output: tasks[message.task](message.input as never, send, untimed) };
  } catch (error) {
    const app = error instanceof AppError ? { code: error.code, details: error.details, status: error.status } : undefined;
    reply = { id: message.id, ok: false, error: { app, message: error instanceof Error ? error.message : String(error) } };
  }
  port.postMessage(reply);
});

port.postMessage({ ready: true } satisfies FromInputThread);
