/**
 * An API path with a malformed percent-encoding (`/api/datasets/%FF`) never reaches a route handler:
 * Next.js fails to decode its params and answered a plain-text 500. The proxy answers it first, in the
 * API's error shape: 401 when API_TOKEN is set and the request carries no valid credential (auth before
 * anything else, as the route wrapper does), else 400.
 */
import { NextResponse, type NextRequest } from "next/server";
import { errorResponse } from "@/lib/errors";
import { SESSION_COOKIE, bearerOf, tokenMatches, verifySessionValue } from "./session";

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

function authenticated(req: NextRequest, token: string): boolean {
  const bearer = bearerOf(req.headers.get("authorization"));
  return bearer !== undefined ? tokenMatches(bearer, token) : verifySessionValue(token, req.cookies.get(SESSION_COOKIE)?.value);
}

/** The proxy's answer for an API path: 401/400 when its encoding is malformed, else on to the handler. */
export function guardApiPath(req: NextRequest): NextResponse | Response {
  if (!hasMalformedEncoding(new URL(req.url).pathname)) return NextResponse.next();
  const token = process.env.API_TOKEN?.trim();
  if (token && !authenticated(req, token)) {
    return errorResponse("unauthorized", "Missing or invalid bearer token (Authorization: Bearer <API_TOKEN>), or no signed-in session");
  }
  return errorResponse("bad_request", "Invalid path: a %-escape in it is not valid percent-encoded UTF-8", [
    { path: "(path)", message: "must be valid percent-encoded UTF-8" },
  ]);
}
