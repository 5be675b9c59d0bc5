/**
 * Retries like a production client: exponential backoff with full jitter on 429, 5xx, time-outs and
 * network errors, honouring Retry-After; never on other 4xx; stops at once when the caller aborts.
 */
import { APICallError } from "ai";

export type RetryDeps = {
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
};

export const realRetryDeps: RetryDeps = {
  random: Math.random,
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
};

export type FailureKind = "rate_limit" | "server" | "timeout" | "network" | "client" | "other";

/** Sort an error from one attempt into what the retry policy and the limiter care about. */
export function classifyError(error: unknown): { kind: FailureKind; retryAfterMs?: number; status?: number } {
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status === 429) return { kind: "rate_limit", status, retryAfterMs: retryAfterMs(error.responseHeaders) };
    if (status !== undefined && (status >= 500 || status === 408)) {
      return { kind: "server", status, retryAfterMs: retryAfterMs(error.responseHeaders) };
    }
    if (status !== undefined) return { kind: "client", status };
    return { kind: "network" };
  }
  const e = error as { name?: string; code?: string; cause?: unknown; message?: string } | undefined;
  if (e?.name === "TimeoutError" || e?.name === "JudgeTimeoutError") return { kind: "timeout" };
  const codes = ["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "UND_ERR_SOCKET", "EAI_AGAIN"];
  const cause = e?.cause as { code?: string } | undefined;
  if (codes.includes(e?.code ?? "") || codes.includes(cause?.code ?? "") || /fetch failed|socket/i.test(e?.message ?? "")) {
    return { kind: "network" };
  }
  return { kind: "other" };
}

function retryAfterMs(headers: Record<string, string> | undefined): number | undefined {
  const raw = headers?.["retry-after"] ?? headers?.["Retry-After"];
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

const retryable: FailureKind[] = ["rate_limit", "server", "timeout", "network"];
const BASE_MS = 500;
const CAP_MS = 30_000;

/** Delay before retry number `attempt` (0-based): Retry-After when given, else full-jitter backoff. */
export function backoffMs(attempt: number, retryAfter: number | undefined, random: () => number): number {
  if (retryAfter !== undefined) return Math.min(retryAfter, 60_000) + Math.floor(random() * 250);
  return Math.floor(random() * Math.min(CAP_MS, BASE_MS * 2 ** attempt));
}

/**
 * Run `attempt` until it succeeds, a failure is not retryable, or the retries are spent: `maxRetries` for
 * 5xx, time-outs and network errors, `maxRateLimitRetries` (default `maxRetries`) for 429s, counted apart.
 * `n` is the attempt's number (0: the first). `onFailure` sees every failed attempt.
 */
export async function withRetries<T>(
  attempt: (n: number) => Promise<T>,
  opts: {
    maxRetries: number;
    maxRateLimitRetries?: number;
    signal?: AbortSignal;
    deps?: RetryDeps;
    onFailure?: (info: ReturnType<typeof classifyError>) => void;
  },
): Promise<T> {
  const deps = opts.deps ?? realRetryDeps;
  let faults = 0;
  let refusals = 0;
  for (let n = 0; ; n++) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    try {
      return await attempt(n);
    } catch (error) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      const info = classifyError(error);
      opts.onFailure?.(info);
      if (!retryable.includes(info.kind)) throw error;
      if (info.kind === "rate_limit" ? ++refusals > (opts.maxRateLimitRetries ?? opts.maxRetries) : ++faults > opts.maxRetries) throw error;
      await deps.sleep(backoffMs(info.kind === "rate_limit" ? refusals - 1 : faults - 1, info.retryAfterMs, deps.random), opts.signal);
    }
  }
}
