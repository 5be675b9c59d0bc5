/**
 * With API_TOKEN set, every page needs a signed-in session (or the bearer token): anything else is
 * redirected to /signin, which hands out the session cookie once the token is entered (lib/api/sign-in.ts).
 * API routes are not matched here: a proxy would buffer request bodies (imports are up to
 * MAX_IMPORT_BYTES), and the route wrapper answers 401 itself.
 */
import { NextResponse, type NextRequest } from "next/server";
import { guardApiPath } from "@/lib/api/malformed-path";
import { SESSION_COOKIE, bearerOf, tokenMatches, verifySessionValue } from "@/lib/api/session";

export function proxy(req: NextRequest): NextResponse | Response {
  // Only API paths holding a % come here (second matcher entry): a malformed escape gets the API's 401/400.
  if (req.nextUrl.pathname.startsWith("/api/")) return guardApiPath(req);
  const token = process.env.API_TOKEN?.trim();
  if (!token) return NextResponse.next();
  const path = req.nextUrl.pathname;
  if (path === "/signin") return NextResponse.next();
  const bearer = bearerOf(req.headers.get("authorization"));
  const allowed = bearer !== undefined ? tokenMatches(bearer, token) : verifySessionValue(token, req.cookies.get(SESSION_COOKIE)?.value);
  if (allowed) return NextResponse.next();
  const url = req.nextUrl.clone();
  url.pathname = "/signin";
  url.search = "";
  url.searchParams.set("next", path + req.nextUrl.search);
  return NextResponse.redirect(url, 307);
}

export const config = {
  matcher: ["/((?!api/|api$|_next/static|_next/image|favicon.ico).*)", "/api/(.*%.*)"],
};
