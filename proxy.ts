/**
 * With API_TOKEN set, the REST API needs `Authorization: Bearer <token>`, yet the pages must keep
 * working without the browser ever holding the token. Pages get an httpOnly, same-site cookie derived
 * from the token (never the token itself); API requests that carry it — and come from our own pages —
 * have the bearer header added here, on the server. Everyone else gets the route wrapper's 401.
 */
import { NextResponse, type NextRequest } from "next/server";

const COOKIE = "turnscope_ui";

async function uiCookieValue(token: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(token), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode("turnscope-ui-session-v1"));
  return Buffer.from(mac).toString("base64url");
}

/** A request our own pages made: same origin by Fetch Metadata, or by Origin when that is absent. */
function fromOwnPages(req: NextRequest): boolean {
  const site = req.headers.get("sec-fetch-site");
  if (site) return site === "same-origin";
  const origin = req.headers.get("origin");
  return origin === null || origin === req.nextUrl.origin;
}

export async function proxy(req: NextRequest): Promise<NextResponse> {
  const token = process.env.API_TOKEN?.trim();
  if (!token) return NextResponse.next();
  const expected = await uiCookieValue(token);
  const isApi = req.nextUrl.pathname.startsWith("/api/") || req.nextUrl.pathname === "/api";
  if (isApi) {
    if (req.headers.has("authorization")) return NextResponse.next();
    if (req.cookies.get(COOKIE)?.value === expected && fromOwnPages(req)) {
      const headers = new Headers(req.headers);
      headers.set("authorization", `Bearer ${token}`);
      return NextResponse.next({ request: { headers } });
    }
    return NextResponse.next();
  }
  const res = NextResponse.next();
  if (req.cookies.get(COOKIE)?.value !== expected) {
    res.cookies.set(COOKIE, expected, { httpOnly: true, sameSite: "strict", path: "/", secure: req.nextUrl.protocol === "https:" });
  }
  return res;
}

export const config = {
  matcher: ["/((?!_next/static|_next/image|favicon.ico).*)"],
};
