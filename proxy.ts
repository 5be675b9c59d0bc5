/**
 * With API_TOKEN set, pages hand the browser the UI session cookie (lib/api/ui-session.ts) that lets
 * their own API calls through without the token. API routes are not matched here: a proxy would
 * buffer request bodies (imports are up to MAX_IMPORT_BYTES), and the route wrapper checks access.
 */
import { NextResponse, type NextRequest } from "next/server";
import { UI_SESSION_COOKIE, uiSessionValue } from "@/lib/api/ui-session";

export function proxy(req: NextRequest): NextResponse {
  const res = NextResponse.next();
  const token = process.env.API_TOKEN?.trim();
  if (!token) return res;
  const expected = uiSessionValue(token);
  if (req.cookies.get(UI_SESSION_COOKIE)?.value !== expected) {
    res.cookies.set(UI_SESSION_COOKIE, expected, { httpOnly: true, sameSite: "strict", path: "/", secure: req.nextUrl.protocol === "https:" });
  }
  return res;
}

export const config = {
  matcher: ["/((?!api/|api$|_next/static|_next/image|favicon.ico).*)"],
};
