/**
 * What crosses between the server's event loop and the judge thread: a call, a cancel, and the call's
 * result or error. Errors cross as plain data and are rebuilt on the other side as the classes the
 * retry policy reads (lib/judge/retry.ts: APICallError's status and headers, a time-out's name, a
 * network error's `cause.code`), so a call in the thread fails exactly as it would in process.
 */
import { APICallError } from "ai";
import type { CallResult, Turn } from "./call";
import { JudgeTimeoutError } from "./call";
import type { JsonSchema } from "./verdicts";

export type CallMessage = {
  type: "call";
  id: number;
  baseURL: string | undefined;
  apiKey: string | undefined;
  model: string;
  turns: Turn[];
  system: string | undefined;
  schema: JsonSchema;
  timeoutMs: number;
};
export type AbortMessage = { type: "abort"; id: number };
export type ToThread = CallMessage | AbortMessage;

type WireCause = { name?: string; message?: string; code?: string };
export type WireError =
  | {
      kind: "api";
      message: string;
      url: string;
      statusCode: number | undefined;
      responseHeaders: Record<string, string> | undefined;
      responseBody: string | undefined;
      isRetryable: boolean;
    }
  | { kind: "error"; name: string; message: string; code?: string; cause?: WireCause };
export type FromThread = { ready: true } | { id: number; ok: true; result: CallResult } | { id: number; ok: false; error: WireError };

function plainCause(cause: unknown): WireCause | undefined {
  if (cause === undefined || cause === null) return undefined;
  const c = cause as WireCause;
  return { name: typeof c.name === "string" ? c.name : undefined, message: typeof c.message === "string" ? c.message : String(cause), code: typeof c.code === "string" ? c.code : undefined };
}

export function toWireError(error: unknown): WireError {
  if (APICallError.isInstance(error)) {
    return {
      kind: "api",
      message: error.message,
      url: error.url,
      statusCode: error.statusCode,
      responseHeaders: error.responseHeaders,
      responseBody: error.responseBody,
      isRetryable: error.isRetryable,
    };
  }
  const e = error as { name?: unknown; message?: unknown; code?: unknown; cause?: unknown } | null | undefined;
  return {
    kind: "error",
    name: typeof e?.name === "string" ? e.name : "Error",
    message: typeof e?.message === "string" ? e.message : String(error),
    code: typeof e?.code === "string" ? e.code : undefined,
    cause: plainCause(e?.cause),
  };
}

export function fromWireError(wire: WireError): Error {
  if (wire.kind === "api") {
    return new APICallError({
      message: wire.message,
      url: wire.url,
      requestBodyValues: undefined,
      statusCode: wire.statusCode,
      responseHeaders: wire.responseHeaders,
      responseBody: wire.responseBody,
      isRetryable: wire.isRetryable,
    });
  }
  const options = wire.cause ? { cause: wire.cause } : undefined;
  const error =
    wire.name === "JudgeTimeoutError"
      ? new JudgeTimeoutError(wire.message)
      : wire.name === "TypeError"
        ? new TypeError(wire.message, options)
        : Object.assign(new Error(wire.message, options), { name: wire.name });
  if (wire.code !== undefined) Object.assign(error, { code: wire.code });
  return error;
}
