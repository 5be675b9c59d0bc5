/**
 * Every HTTP request to a target goes through here (issue 48): a deadline and a byte budget that hold,
 * an address check on the socket actually connected, and no redirect across origins.
 *
 * - The deadline is a timer of our own, referenced until the call ends: `AbortSignal.any([cancel,
 *   AbortSignal.timeout(ms)])` lets the garbage collector take the timeout signal with its timer on
 *   Node 20, and a target that drips a byte a second then holds a worker slot for ever.
 * - The reply is counted as it streams in and abandoned past TARGET_MAX_REPLY_BYTES (a declared
 *   Content-Length past it is refused before reading).
 * - Names are resolved by our own lookup, which refuses every address in TARGET_DENY_NETWORKS (unless
 *   TARGET_ALLOW_NETWORKS lets it through): a name that resolves to a metadata address is refused too.
 * - Redirects are followed only within the target's origin (headers and all, at most 5); one to another
 *   origin fails the call, so a custom secret header never travels to a host the target did not name.
 */
import dns, { type LookupAddress, type LookupAllOptions, type LookupOneOptions } from "node:dns";
import { Agent, fetch as undiciFetch } from "undici";
import { getConfig } from "@/lib/config";
import { addressRefusal, hostRefusal, maskUrl } from "./policy";

export class TargetHttpError extends Error {
  constructor(
    message: string,
    /** `timeout`, `size`, `refused` (policy), `redirect`, or `network`. */
    readonly kind: "timeout" | "size" | "refused" | "redirect" | "network",
  ) {
    super(message);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that refuses a name when any address it resolves to is refused. */
export function guardedLookup(hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    for (const a of addresses) {
      const why = addressRefusal(a.address);
      if (why) return callback(Object.assign(new Error(`${hostname} resolves to ${why}`), { code: "ETARGETREFUSED" }), []);
    }
    if ((options as LookupAllOptions).all) callback(null, addresses);
    else if (addresses.length === 0) callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), []);
    else callback(null, addresses[0].address, addresses[0].family);
  });
}

let agent: Agent | undefined;
const targetAgent = (): Agent => (agent ??= new Agent({ connect: { lookup: guardedLookup as never } }));

const MAX_SAME_ORIGIN_REDIRECTS = 5;

function causeOf(error: unknown): { code?: string; message?: string } | undefined {
  const cause = (error as { cause?: unknown })?.cause;
  return typeof cause === "object" && cause !== null ? (cause as { code?: string; message?: string }) : undefined;
}

/**
 * A fetch for one target: follows redirects within its origin only, refuses denied addresses, and hands
 * back a Response whose body errors past `maxBytes`. Usable as the AI SDK provider's `fetch`.
 */
export function targetFetch(maxBytes = getConfig().TARGET_MAX_REPLY_BYTES): typeof fetch {
  return async (input, init) => {
    let url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    const origin = url.origin;
    let method = init?.method ?? "POST";
    let body = init?.body;
    const headers = new Headers(init?.headers);
    // fetch refuses a URL with credentials in it: they go as Basic authentication, as curl sends them.
    if (url.username || url.password) {
      if (!headers.has("authorization")) headers.set("authorization", `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`);
      url.username = "";
      url.password = "";
    }
    for (let hop = 0; ; hop++) {
      const refused = hostRefusal(url.hostname);
      if (refused) throw new TargetHttpError(`refused to connect: ${refused}`, "refused");
      let res: Response;
      try {
        res = (await undiciFetch(url, { ...(init as object), headers: headers as never, method, body: body as never, redirect: "manual", dispatcher: targetAgent() })) as unknown as Response;
      } catch (error) {
        const cause = causeOf(error);
        if (cause?.code === "ETARGETREFUSED") throw new TargetHttpError(`refused to connect: ${cause.message}`, "refused");
        throw error;
      }
      const location = res.status >= 300 && res.status < 400 ? res.headers.get("location") : null;
      if (location === null) return limitedResponse(res, maxBytes);
      await res.body?.cancel().catch(() => undefined);
      const next = new URL(location, url);
      if (next.origin !== origin) throw new TargetHttpError(`redirected (${res.status}) to another origin, ${maskUrl(next.origin)}: redirects are followed only within the target's own origin`, "redirect");
      if (hop >= MAX_SAME_ORIGIN_REDIRECTS) throw new TargetHttpError(`redirected more than ${MAX_SAME_ORIGIN_REDIRECTS} times`, "redirect");
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
        method = "GET";
        body = undefined;
      }
      url = next;
    }
  };
}

/** The response with a body that errors once more than `maxBytes` have arrived. */
function limitedResponse(res: Response, maxBytes: number): Response {
  const declared = Number(res.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    void res.body?.cancel().catch(() => undefined);
    throw sizeError(maxBytes, declared);
  }
  if (!res.body) return res;
  let seen = 0;
  const counted = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) controller.error(sizeError(maxBytes));
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
}

const sizeError = (maxBytes: number, declared?: number) =>
  new TargetHttpError(`replied more than TARGET_MAX_REPLY_BYTES (${maxBytes} bytes)${declared === undefined ? "" : `: it declared ${declared}`}`, "size");

/**
 * One POST to a target with a deadline over the whole exchange (connect, headers and body) and the
 * reply's text; errors are TargetHttpError naming the limit, or the caller's cancel reason.
 */
export async function targetPost(url: string, req: { headers: Record<string, string>; body: string; signal: AbortSignal; timeoutMs: number }): Promise<{ status: number; ok: boolean; text: string }> {
  const controller = new AbortController();
  const deadline = new TargetHttpError(`no answer within ${req.timeoutMs} ms (the target's timeout_ms)`, "timeout");
  const timer = setTimeout(() => controller.abort(deadline), req.timeoutMs);
  const onCancel = () => controller.abort(req.signal.reason);
  if (req.signal.aborted) onCancel();
  else req.signal.addEventListener("abort", onCancel, { once: true });
  try {
    const res = await targetFetch()(url, { method: "POST", headers: req.headers, body: req.body, signal: controller.signal });
    const text = await res.text();
    return { status: res.status, ok: res.ok, text };
  } catch (error) {
    if (req.signal.aborted) throw req.signal.reason;
    if (controller.signal.aborted && controller.signal.reason === deadline) throw deadline;
    if (error instanceof TargetHttpError) throw error;
    const cause = (error as { cause?: unknown })?.cause;
    if (cause instanceof TargetHttpError) throw cause;
    throw new TargetHttpError((error as Error)?.message === "fetch failed" ? `could not be reached (${causeOf(error)?.code ?? causeOf(error)?.message ?? "network error"})` : ((error as Error)?.message ?? String(error)), "network");
  } finally {
    clearTimeout(timer);
    req.signal.removeEventListener("abort", onCancel);
  }
}
