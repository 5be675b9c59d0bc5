/**
 * An API path with a malformed percent-encoding (`/api/datasets/%FF`) never reaches a route handler:
 * Next.js fails to decode its params and answered a plain-text 500. The proxy answers it first, in the
 * API's error shape: 401 when credentials are configured and the request carries no valid one (auth before
 * anything else, as the route wrapper does), else 400.
 */
import { NextResponse, type NextRequest } from "next/server";
import { authRequired, identify, type Caller } from "@/lib/auth";
import { AppError, errorResponse } from "@/lib/errors";
import { clientAddress } from "./client-address";
import { SESSION_COOKIE, bearerOf } from "./session";

/** True when a segment of the raw (still encoded) path cannot be percent-decoded. */
export function hasMalformedEncoding(rawPath: string): boolean {
  for (const segment of rawPath.split("/")) {
    try {
      decodeURIComponent(segment);
    } catch {
      return true;
    }
  }
  return false;
}

/**
 * The caller of a request the proxy answers (a page, a malformed API path), checked as the route wrapper
 * checks: a wrong bearer counts against the client's address, and a locked-out client gets "locked"
 * (before, guesses there were never counted: 388 a second, a token found while /api/me answered 429).
 */
export async function pageCaller(req: NextRequest): Promise<Caller | { lockedSeconds: string } | undefined> {
  try {
    return await identify({ bearer: bearerOf(req.headers.get("authorization")), sessionId: req.cookies.get(SESSION_COOKIE)?.value, client: clientAddress(req) });
  } catch (error) {
    if (error instanceof AppError && error.code === "too_many_requests") return { lockedSeconds: error.details.find((d) => d.path === "retry_after")?.message ?? "60" };
    if (error instanceof AppError && error.code === "unauthorized") return undefined;
    throw error;
  }
}

/** The proxy's answer for an API path: 401/429/400 when its encoding is malformed, else on to the handler. */
export async function guardApiPath(req: NextRequest): Promise<NextResponse | Response> {
  if (!hasMalformedEncoding(new URL(req.url).pathname)) return NextResponse.next();
  if (await authRequired()) {
    const caller = await pageCaller(req);
    if (caller && "lockedSeconds" in caller) return errorResponse("too_many_requests", `Too many failed credentials from this address; try again in ${caller.lockedSeconds} s`, [], 429, { "retry-after": caller.lockedSeconds });
    if (!caller) return errorResponse("unauthorized", "Missing or invalid credential (Authorization: Bearer <API key or API_TOKEN>), or no signed-in session");
  }
  return errorResponse("bad_request", "Invalid path: a %-escape in it is not valid percent-encoded UTF-8", [
    { path: "(path)", message: "must be valid percent-encoded UTF-8" },
  ]);
}
