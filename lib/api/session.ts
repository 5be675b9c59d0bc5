/**
 * HTTP pieces of sign-in: the session cookie (HttpOnly, SameSite=Strict, holding a random session id that
 * lib/auth/sessions.ts stores hashed), the bearer header, the cross-site check and the `next` target.
 * Pure functions, so the proxy, the route wrapper and tests share them.
 */
export const SESSION_COOKIE = "turnscope_session";

/** The bearer token of an `Authorization` header, if any. */
export function bearerOf(header: string | null): string | undefined {
  const match = header ? /^Bearer\s+(.+)$/i.exec(header) : null;
  return match ? match[1].trim() : undefined;
}

/**
 * A request our own pages made, or a client with no browser context (curl, scripts): refuse only what a
 * browser marks as coming from another site, so a signed-in browser cannot be driven by another page.
 */
export function notCrossSite(req: Request): boolean {
  const site = req.headers.get("sec-fetch-site");
  if (site) return site === "same-origin" || site === "none";
  const origin = req.headers.get("origin");
  return origin === null || origin === new URL(req.url).origin;
}

export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.get("cookie");
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return undefined;
}

/** Cookie attributes of the session (Secure when served over https). */
export function sessionCookieAttributes(secure: boolean, maxAgeSeconds: number): string {
  return `Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? "; Secure" : ""}`;
}

const SAME_ORIGIN = "http://turnscope.invalid";

/**
 * A `next` target after sign-in: a path on this site, normalised, else `/`. Control characters and
 * backslashes are refused outright (browsers drop tabs and newlines and read `\` as `/`, which turns
 * `/<TAB>/host` or `/\host` into another origin), and so is anything that resolves off this origin or to
 * a protocol-relative `//host` after normalisation (`/.//host`).
 */
export function safeNextPath(next: string | null | undefined): string {
  if (!next || next.length > 2000 || !next.startsWith("/") || /[\u0000-\u001f\u007f\\]/.test(next)) return "/";
  let url: URL;
  try {
    url = new URL(next, SAME_ORIGIN);
  } catch {
    return "/";
  }
  const path = url.pathname + url.search + url.hash;
  if (url.origin !== SAME_ORIGIN || path.startsWith("//") || path === "/api" || path.startsWith("/api/")) return "/";
  return path;
}
