/**
 * An API path with a malformed percent-encoding (`/api/datasets/%FF`) never reaches a route handler:
 * Next.js fails to decode its params and answered a plain-text 500. The proxy answers it first, in the
 * API's error shape: 401 when credentials are configured and the request carries no valid one (auth before
 * anything else, as the route wrapper does), else 400.
 */
import { NextResponse, type NextRequest } from "next/server";
import { authRequired, callerForSession } from "@/lib/auth";
import { callerForSecret } from "@/lib/auth/identify";
import { errorResponse } from "@/lib/errors";
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

async function authenticated(req: NextRequest): Promise<boolean> {
  const bearer = bearerOf(req.headers.get("authorization"));
  const session = req.cookies.get(SESSION_COOKIE)?.value;
  const caller = bearer !== undefined ? await callerForSecret(bearer) : session ? await callerForSession(session) : undefined;
  return caller !== undefined;
}

/** The proxy's answer for an API path: 401/400 when its encoding is malformed, else on to the handler. */
export async function guardApiPath(req: NextRequest): Promise<NextResponse | Response> {
  if (!hasMalformedEncoding(new URL(req.url).pathname)) return NextResponse.next();
  if ((await authRequired()) && !(await authenticated(req))) {
    return errorResponse("unauthorized", "Missing or invalid credential (Authorization: Bearer <API key or API_TOKEN>), or no signed-in session");
  }
  return errorResponse("bad_request", "Invalid path: a %-escape in it is not valid percent-encoded UTF-8", [
    { path: "(path)", message: "must be valid percent-encoded UTF-8" },
  ]);
}
