/**
 * Sign-in sessions for the pages when API_TOKEN is set. The browser never holds the token: after the
 * token is entered once on /signin it receives an HttpOnly, SameSite=Strict cookie that carries an
 * expiry and a random id, signed with an HMAC keyed by the token. Changing API_TOKEN ends every session.
 * Pure functions (node:crypto only), so the proxy, the route wrapper and tests share them.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const SESSION_COOKIE = "turnscope_session";
const VERSION = "v1";

function signature(token: string, payload: string): string {
  return createHmac("sha256", token).update(`turnscope-session|${payload}`).digest("base64url");
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A new session cookie value that expires `ttlSeconds` from `now` (ms). */
export function createSessionValue(token: string, ttlSeconds: number, now = Date.now()): string {
  const expires = Math.floor(now / 1000) + ttlSeconds;
  const payload = `${VERSION}.${expires}.${randomBytes(16).toString("base64url")}`;
  return `${payload}.${signature(token, payload)}`;
}

/** Whether a cookie value is a session this token signed and that has not expired. */
export function verifySessionValue(token: string, value: string | undefined, now = Date.now()): boolean {
  if (!value || value.length > 200) return false;
  const parts = value.split(".");
  if (parts.length !== 4 || parts[0] !== VERSION || !/^\d{1,12}$/.test(parts[1])) return false;
  const payload = parts.slice(0, 3).join(".");
  if (!sameText(parts[3], signature(token, payload))) return false;
  return Number(parts[1]) * 1000 > now;
}

/** Whether a presented token is the API token (constant time). */
export function tokenMatches(given: string, expected: string): boolean {
  return sameText(given, expected);
}

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

/** A `next` target after sign-in: only a path on this site, never another origin. */
export function safeNextPath(next: string | null | undefined): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\") || next.startsWith("/api")) return "/";
  return next;
}
