/**
 * The one wrapper every route handler goes through: authenticate, parse params/query/body with zod,
 * call the handler, and map every error to the wire shape of shared/API.md. A 500 means a bug.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { credentialEpoch, identify, requireRole, roleAllows, type Caller, type Role } from "@/lib/auth";
import { AppError, errorResponse, type ErrorDetail } from "@/lib/errors";
import { findExcessiveNesting } from "@/lib/import/json-syntax";
import { clientAddress, isLocalClient } from "./client-address";
import { refuseNul } from "./nul";
import type { StreamGuard } from "./sse";
import { SESSION_COOKIE, bearerOf, notCrossSite, readCookie } from "./session";

type RouteContext = { params: Promise<Record<string, string | string[] | undefined>> };

export type HandlerInput<P, Q, B> = {
  params: P;
  query: Q;
  body: B;
  req: Request;
  /** The caller's user id: from the credential, or (one-person mode only) `X-User-Id`, else `default`. */
  userId: string;
  caller: Caller;
  requestId: string;
  /** For a stream: checks the request's credential again (a revoked key, an ended session, a server locked since). */
  guard: StreamGuard;
};

export type RouteSpec<P, Q, B> = {
  params?: z.ZodType<P, unknown>;
  query?: z.ZodType<Q, unknown>;
  body?: z.ZodType<B, unknown>;
  handler: (input: HandlerInput<P, Q, B>) => Promise<Response> | Response;
  /** Reachable without a credential (only the sign-in endpoint). */
  public?: boolean;
  /** The weakest role allowed: default `viewer` for GET/HEAD, `annotator` for anything that writes. */
  role?: Role;
  /** Refuse a larger JSON body with 413 (default MAX_JSON_BODY_BYTES; the rest is read and dropped, never kept). */
  maxBodyBytes?: number;
};

/** Turn zod issues into `{path, message}` details, paths written like `items[0].name`. */
export function zodDetails(error: z.ZodError, prefix?: string): ErrorDetail[] {
  return error.issues.map((issue) => {
    const parts = prefix ? [prefix, ...issue.path] : issue.path;
    const path = parts
      .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
      .join("");
    return { path: path || "(root)", message: issue.message };
  });
}

function parseWith<T>(schema: z.ZodType<T, unknown>, value: unknown, where: string, prefix?: string): T {
  refuseNul(value, where, prefix);
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const details = zodDetails(parsed.error, prefix);
    const first = details[0];
    const summary = first ? `${first.path}: ${first.message}` : "invalid";
    throw new AppError("bad_request", `Invalid ${where} (${summary})`, details);
  }
  return parsed.data;
}

async function readJsonBody(req: Request, routeMax: number | undefined): Promise<unknown> {
  const bytes = routeMax === undefined ? await readCappedBody(req, getConfig().MAX_JSON_BODY_BYTES) : await readCappedBody(req, routeMax, "");
  const text = bytes.toString("utf8");
  if (text.trim() === "") return undefined;
  // Within the size limit a body can still nest half a million arrays: refused before it is parsed (or walked).
  const maxDepth = getConfig().MAX_JSON_DEPTH;
  const deep = findExcessiveNesting(text, maxDepth);
  if (deep !== -1) {
    throw new AppError("bad_request", `Request body nested too deep: more than ${maxDepth} levels of arrays and objects (MAX_JSON_DEPTH), at character ${deep}`, [
      { path: "(root)", message: `must nest at most ${maxDepth} levels (MAX_JSON_DEPTH)` },
    ]);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new AppError("bad_request", `Request body is not valid JSON: ${(e as Error).message}`, [
      { path: "(root)", message: "not valid JSON" },
    ]);
  }
}

/** Past the limit, a body is read on (and dropped) this much further so the client sees the 413, then cut off. */
const DRAIN_BYTES = 16 * 1024 * 1024;

function tooLarge(maxBytes: number, setting?: string): AppError {
  const shown = maxBytes >= 1024 * 1024 && maxBytes % (1024 * 1024) === 0 ? `${maxBytes / (1024 * 1024)} MiB` : `${Math.round(maxBytes / 1024)} KB`;
  return new AppError("payload_too_large", `Request body too large: at most ${shown}${setting ? ` (${setting})` : ""}`, [
    { path: "(root)", message: `must be at most ${maxBytes} bytes` },
  ]);
}

/**
 * The body's bytes, or a 413 once it passes `maxBytes` (at once when its Content-Length says so). What
 * comes after the limit is never kept: it is read and dropped for a while, so a client still sending
 * sees the 413 rather than a closed connection, then the stream is cancelled.
 */
export async function readCappedBody(req: Request, maxBytes: number, setting = "MAX_JSON_BODY_BYTES"): Promise<Buffer> {
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) {
    void req.body?.cancel().catch(() => undefined);
    throw tooLarge(maxBytes, setting);
  }
  if (!req.body) return Buffer.alloc(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size <= maxBytes) chunks.push(value);
    else if (size > maxBytes + DRAIN_BYTES) {
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  if (size > maxBytes) throw tooLarge(maxBytes, setting);
  return Buffer.concat(chunks);
}

function queryObject(url: URL): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of url.searchParams) out[k] = v;
  return out;
}

/**
 * Who is calling (lib/auth): the bearer credential, else the session cookie of a request another site did
 * not send; 401 without one when credentials are configured, 429 while this client is locked out.
 */
export async function authenticate(req: Request): Promise<Caller> {
  const bearer = bearerOf(req.headers.get("authorization"));
  return identify({
    bearer,
    sessionId: bearer === undefined && notCrossSite(req) ? readCookie(req, SESSION_COOKIE) : undefined,
    claimedUser: req.headers.get("x-user-id") ?? undefined,
    client: clientAddress(req),
  });
}

const openCaller: Caller = { userId: "default", role: "viewer", via: "open" };

/** Map anything thrown to a Response; unknown errors are logged and answered as a generic 500. */
export function toErrorResponse(error: unknown, requestId: string): Response {
  const headers = { "x-request-id": requestId };
  if (error instanceof AppError) {
    const response = error.toResponse(headers);
    const retryAfter = error.code === "too_many_requests" ? error.details.find((d) => d.path === "retry_after") : undefined;
    if (retryAfter) response.headers.set("retry-after", retryAfter.message);
    return response;
  }
  if (error instanceof z.ZodError) {
    return errorResponse("bad_request", "Invalid input", zodDetails(error), 400, headers);
  }
  log.error("unhandled error", { request_id: requestId, error });
  return errorResponse("internal", "Internal server error", [], 500, headers);
}

/** Build a Next.js route handler from a spec. */
export function route<P = Record<string, never>, Q = Record<string, never>, B = undefined>(
  spec: RouteSpec<P, Q, B>,
): (req: Request, ctx: RouteContext) => Promise<Response> {
  return async (req, ctx) => {
    const requestId = req.headers.get("x-request-id") || randomUUID();
    const started = performance.now();
    let response: Response;
    try {
      const caller = spec.public ? openCaller : await authenticate(req);
      if (!spec.public) requireRole(caller, spec.role ?? (req.method === "GET" || req.method === "HEAD" ? "viewer" : "annotator"));
      if (spec.role === "admin" && caller.via === "open" && !isLocalClient(clientAddress(req))) {
        // While open, everyone is an admin: managing people and keys from afar would let a stranger make the first admin key and lock the owner out.
        throw new AppError("forbidden", "While no credential is configured, people and keys are managed from this machine only (a loopback address)");
      }
      const url = new URL(req.url);
      const rawParams = ctx?.params ? await ctx.params : {};
      const params = spec.params ? parseWith(spec.params, rawParams, "path parameter") : ({} as P);
      const query = spec.query ? parseWith(spec.query, queryObject(url), "query parameter") : ({} as Q);
      const body = spec.body ? parseWith(spec.body, await readJsonBody(req, spec.maxBodyBytes), "request body") : (undefined as B);
      const needed = spec.role ?? (req.method === "GET" || req.method === "HEAD" ? "viewer" : "annotator");
      const guard: StreamGuard = {
        epoch: credentialEpoch,
        stillAuthorized: async () => {
          if (spec.public) return true;
          const now = await authenticate(req).catch(() => undefined);
          return now !== undefined && roleAllows(now.role, needed);
        },
      };
      response = await spec.handler({ params, query, body, req, userId: caller.userId, caller, requestId, guard });
    } catch (error) {
      response = toErrorResponse(error, requestId);
    }
    if (!response.headers.has("x-request-id")) {
      try {
        response.headers.set("x-request-id", requestId);
      } catch {
        // Some responses (e.g. from fetch) have immutable headers; the id is in the log either way.
      }
    }
    log.info("request", {
      request_id: requestId,
      method: req.method,
      path: new URL(req.url).pathname,
      status: response.status,
      ms: Math.round(performance.now() - started),
    });
    return response;
  };
}

/** 200 (or another status) with a JSON body. */
export function json(data: unknown, init: { status?: number; headers?: HeadersInit } = {}): Response {
  return Response.json(data, { status: init.status ?? 200, headers: init.headers });
}

/** A page of a list, with `X-Total-Count`. */
export function page(items: unknown[], total: number): Response {
  return Response.json(items, {
    headers: { "x-total-count": String(total), "access-control-expose-headers": "X-Total-Count" },
  });
}

export function noContent(): Response {
  return new Response(null, { status: 204 });
}
