/**
 * With credentials configured (API_TOKEN or any API key), every page needs a live sign-in session (or a
 * bearer key): anything else is redirected to /signin. Sessions are checked against the store, so a
 * signed-out or revoked one is refused here too (the proxy runs on Node.js in Next.js 16). API routes are
 * not matched: a proxy would buffer request bodies (imports are up to MAX_IMPORT_BYTES), and the route
 * wrapper answers 401/403 itself.
 */
import { NextResponse, type NextRequest } from "next/server";
import { authRequired } from "@/lib/auth";
import { guardApiPath, pageCaller } from "@/lib/api/malformed-path";

export async function proxy(req: NextRequest): Promise<NextResponse | Response> {
  // Only API paths holding a % come here (second matcher entry): a malformed escape gets the API's 401/400.
  if (req.nextUrl.pathname.startsWith("/api/")) return await guardApiPath(req);
  const path = req.nextUrl.pathname;
  if (path === "/signin" || !(await authRequired())) return NextResponse.next();
  const caller = await pageCaller(req);
  if (caller && "lockedSeconds" in caller) {
    return new Response(`Too many failed credentials from this address; try again in ${caller.lockedSeconds} s.`, { status: 429, headers: { "content-type": "text/plain; charset=utf-8", "retry-after": caller.lockedSeconds } });
  }
  if (caller) return NextResponse.next();
  const url = req.nextUrl.clone();
  url.pathname = "/signin";
  url.search = "";
  url.searchParams.set("next", path + req.nextUrl.search);
  return NextResponse.redirect(url, 307);
}

export const config = {
  matcher: ["/((?!api/|api$|_next/static|_next/image|favicon.ico|icon.svg).*)", "/api/(.*%.*)"],
};
