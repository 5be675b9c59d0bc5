/**
 * The judge's HTTP client: a `fetch` for the AI SDK provider that sends each request through undici's
 * `Dispatcher.dispatch` on one keep-alive `Agent` and hands back a standard `Response` whose body streams.
 *
 * Why not the platform's fetch: it is CPU, and a served run is CPU-bound on one process. Measured on
 * this machine (3,200 POSTs of a 2 kB chat body, a ~300 B JSON reply, 32 in flight, CPU of the client
 * process, three rounds under shared load): Node 20's fetch 1,060–1,400 µs per request; undici's
 * `request` 390–660 µs (its Node `Readable` body is most of that); node:http with a keep-alive Agent
 * 380–690 µs; `Agent.dispatch` feeding a web `ReadableStream` directly 370–420 µs — the cheapest, so
 * it is used. undici is also the engine under Node's fetch, so connection errors carry the same
 * `cause` (ECONNREFUSED, UND_ERR_SOCKET, …) and https, keep-alive and time-outs behave as before.
 *
 * What the AI SDK and the judge rely on is kept as fetch does it:
 *  - abort: rejects with the signal's reason (a DOMException "AbortError" unless the caller gave one);
 *    once the response has arrived, its body errors with that reason instead;
 *  - network failure: rejects with `TypeError("fetch failed", { cause })`, which the AI SDK turns
 *    into a retryable APICallError; a connection lost mid-body errors the body with
 *    `TypeError("terminated", { cause })`;
 *  - status, status text and headers as received (Retry-After is read from them on a 429);
 *  - redirects followed (up to 20, by the shared Agent);
 *  - the body streamed with backpressure (SSE replies arrive chunk by chunk).
 * Anything this path does not carry (a `Request` object as input, a stream/FormData/Blob body, a
 * redirect mode other than "follow") goes to the platform's fetch.
 */
import { Agent, type Dispatcher } from "undici";

/** Statuses whose response has no body (fetch's "null body status"). */
const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);
const MAX_REDIRECTIONS = 20;

/**
 * The platform's fetch, not the one Next.js patches for its data cache: judge calls are POSTs never
 * cached, and a run goes on long after the request that started it, so the patch's per-call tracing
 * and bookkeeping (tied to that request) are pure cost (a served 2,000-cell run under a 100 ms judge
 * took 8.9 s with them and 7.7 s without). Looked up per call: Next.js patches after this module loads.
 */
export const platformFetch: typeof fetch = (input, init) => {
  const current = globalThis.fetch as typeof fetch & { _nextOriginalFetch?: typeof fetch };
  return (current._nextOriginalFetch ?? current)(input, init);
};

/**
 * No cap on connections per origin, like the platform fetch's own agent: the judge's limiter already
 * caps the calls in flight, and a cap here would queue calls out of its sight, with the queueing time
 * counted against the judge time limit. Keep-alive as undici's default (idle sockets kept 4 s).
 */
function defaultAgent(): Agent {
  return new Agent({ maxRedirections: MAX_REDIRECTIONS });
}

let sharedAgent: Agent | undefined;

function requestHeaders(headers: HeadersInit | undefined): Record<string, string> {
  // No prototype: a header name is only ever a key of its own ("constructor" included).
  const out = Object.create(null) as Record<string, string>;
  if (headers === undefined) {
    // nothing
  } else if (headers instanceof Headers || Array.isArray(headers)) {
    for (const [name, value] of headers instanceof Headers ? headers.entries() : headers) {
      const key = name.toLowerCase();
      out[key] = key in out ? `${out[key]}, ${value}` : value;
    }
  } else {
    for (const name of Object.keys(headers)) {
      const value = (headers as Record<string, string | undefined>)[name];
      if (value !== undefined) out[name.toLowerCase()] = value;
    }
  }
  // fetch's default; no accept-encoding is sent, so replies come uncompressed and need no decoding.
  if (!("accept" in out)) out.accept = "*/*";
  return out;
}

function responseHeaders(raw: Buffer[] | string[] | null): Headers {
  const headers = new Headers();
  if (!raw) return headers;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    headers.append(raw[i].toString("latin1"), raw[i + 1].toString("latin1"));
  }
  return headers;
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new DOMException("This operation was aborted", "AbortError");
}

function dispatchFetch(dispatcher: Dispatcher, url: URL, init: RequestInit): Promise<Response> {
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(signal.reason);

  return new Promise<Response>((resolve, reject) => {
    let abortRequest: ((reason: Error) => void) | undefined;
    let pendingAbort: Error | undefined;
    let resume: (() => void) | undefined;
    let body: ReadableStreamDefaultController<Uint8Array> | undefined;
    let responded = false;
    let finished = false;

    const cleanup = () => {
      finished = true;
      signal?.removeEventListener("abort", onAbort);
    };
    const stop = (reason: Error) => {
      if (abortRequest) abortRequest(reason);
      else pendingAbort = reason;
    };
    /** The request ends in an error: reject the promise, or error the body already handed out. */
    const fail = (error: unknown) => {
      if (finished) return;
      cleanup();
      if (!responded) reject(error);
      else body?.error(error);
    };
    function onAbort() {
      const reason: unknown = signal?.reason;
      fail(reason);
      stop(asError(reason));
    }
    signal?.addEventListener("abort", onAbort, { once: true });

    const handler: Dispatcher.DispatchHandlers = {
      onConnect(abort) {
        abortRequest = abort;
        if (pendingAbort) abort(pendingAbort);
      },
      onHeaders(status, rawHeaders, resumeRequest, statusText) {
        if (status < 200) return true; // 1xx informational: the real answer follows
        if (finished) return false;
        resume = resumeRequest;
        let response: Response;
        try {
          const headers = responseHeaders(rawHeaders);
          if (NULL_BODY_STATUS.has(status)) {
            response = new Response(null, { status, statusText, headers });
          } else {
            const stream = new ReadableStream<Uint8Array>({
              start(controller) {
                body = controller;
              },
              // The reader wants more: let undici read from the socket again (see onData).
              pull() {
                resume?.();
              },
              cancel() {
                cleanup();
                stop(new DOMException("The response body was cancelled", "AbortError"));
              },
            });
            response = new Response(stream, { status, statusText, headers });
          }
        } catch (error) {
          // A reply fetch would refuse too (a status outside 200–599, a header value it cannot hold).
          fail(new TypeError("fetch failed", { cause: error }));
          stop(asError(error));
          return false;
        }
        responded = true;
        resolve(response);
        return true;
      },
      onData(chunk) {
        if (finished || !body) return true;
        body.enqueue(chunk);
        // false pauses the socket until pull() resumes it: backpressure for a slow reader.
        return (body.desiredSize ?? 1) > 0;
      },
      onComplete() {
        if (finished) return;
        cleanup();
        body?.close();
      },
      onError(error) {
        if (finished) return;
        if (signal?.aborted) return fail(signal.reason);
        fail(responded ? new TypeError("terminated", { cause: error }) : new TypeError("fetch failed", { cause: error }));
      },
    };

    try {
      dispatcher.dispatch(
        {
          origin: url.origin,
          path: url.pathname + url.search,
          method: (init.method ?? "GET").toUpperCase() as Dispatcher.HttpMethod,
          headers: requestHeaders(init.headers),
          body: init.body as string | Uint8Array | null | undefined,
        },
        handler,
      );
    } catch (error) {
      fail(new TypeError("fetch failed", { cause: error }));
    }
  });
}

function carriedBody(body: RequestInit["body"]): boolean {
  return body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array;
}

/** A fetch over `dispatcher` (tests give their own; production shares one keep-alive Agent). */
export function createJudgeFetch(dispatcher?: Dispatcher): typeof fetch {
  return (input, init) => {
    if (input instanceof Request || !carriedBody(init?.body) || (init?.redirect !== undefined && init.redirect !== "follow")) {
      return platformFetch(input, init);
    }
    let url: URL;
    try {
      url = input instanceof URL ? input : new URL(input);
    } catch (error) {
      return Promise.reject(new TypeError("Failed to parse URL", { cause: error }));
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return platformFetch(input, init);
    return dispatchFetch(dispatcher ?? (sharedAgent ??= defaultAgent()), url, init ?? {});
  };
}

/** The fetch every judge provider uses. */
export const judgeFetch: typeof fetch = createJudgeFetch();
