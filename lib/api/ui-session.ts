/**
 * With API_TOKEN set, the browser never holds the token: pages receive an httpOnly, same-site cookie
 * derived from it, and the API accepts that cookie on requests our own pages make (same origin).
 */
import { createHmac } from "node:crypto";

export const UI_SESSION_COOKIE = "turnscope_ui";

/** The cookie value for a token: an HMAC of a fixed label, so the cookie never reveals the token. */
export function uiSessionValue(token: string): string {
  return createHmac("sha256", token).update("turnscope-ui-session-v1").digest("base64url");
}

/** A request our own pages made: same origin by Fetch Metadata, or by Origin when that is absent. */
export function fromOwnPages(req: Request): boolean {
  const site = req.headers.get("sec-fetch-site");
  if (site) return site === "same-origin";
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
