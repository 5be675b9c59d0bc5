/**
 * The sign-in endpoint's logic: check the token once, hand out the signed session cookie, clear it on
 * sign-out. Failed attempts are limited per client so the token cannot be guessed at speed.
 */
import { getConfig } from "@/lib/config";
import { processSingleton } from "@/lib/process-state";
import { AppError } from "@/lib/errors";
import {
  SESSION_COOKIE,
  createSessionValue,
  notCrossSite,
  readCookie,
  safeNextPath,
  sessionCookieAttributes,
  tokenMatches,
  verifySessionValue,
} from "./session";

const FAILURE_WINDOW_MS = 5 * 60_000;
const MAX_FAILURES = 10;
const failures = processSingleton("auth.failures", () => new Map<string, number[]>());

function clientKey(req: Request): string {
  return req.headers.get("x-forwarded-for")?.split(",")[0].trim() || req.headers.get("x-real-ip") || "local";
}

function recentFailures(key: string, now: number): number[] {
  const list = (failures.get(key) ?? []).filter((t) => now - t < FAILURE_WINDOW_MS);
  failures.set(key, list);
  return list;
}

function isSecure(req: Request): boolean {
  return new URL(req.url).protocol === "https:" || req.headers.get("x-forwarded-proto") === "https";
}

type SignInInput = { token: string; next: string; form: boolean };

async function readInput(req: Request): Promise<SignInInput> {
  const type = req.headers.get("content-type") ?? "";
  if (type.includes("application/x-www-form-urlencoded") || type.includes("multipart/form-data")) {
    const form = await req.formData().catch(() => null);
    if (!form) throw new AppError("bad_request", "Unreadable form body");
    return { token: String(form.get("token") ?? ""), next: safeNextPath(String(form.get("next") ?? "/")), form: true };
  }
  const text = await req.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    throw new AppError("bad_request", "Request body is not valid JSON", [{ path: "(root)", message: "not valid JSON" }]);
  }
  const token = (body as { token?: unknown } | undefined)?.token;
  if (typeof token !== "string" || token === "") {
    throw new AppError("bad_request", "Invalid request body (token: required string)", [{ path: "token", message: "required string" }]);
  }
  return { token, next: "/", form: false };
}

function redirect(location: string, cookie?: string): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  if (cookie) headers.append("set-cookie", cookie);
  return new Response(null, { status: 303, headers });
}

/** POST /api/session. */
export async function signIn(req: Request): Promise<Response> {
  const token = getConfig().API_TOKEN;
  if (!token) throw new AppError("conflict", "Sign-in is not needed: API_TOKEN is not set");
  // A sign-in form on another site must not sign this browser in (login CSRF).
  if (!notCrossSite(req)) throw new AppError("forbidden", "Sign-in from another site is refused");
  const input = await readInput(req);
  const now = Date.now();
  const key = clientKey(req);
  const recent = recentFailures(key, now);
  if (recent.length >= MAX_FAILURES) {
    const retryAfter = Math.ceil((recent[0] + FAILURE_WINDOW_MS - now) / 1000);
    if (input.form) return redirect(`/signin?error=locked&next=${encodeURIComponent(input.next)}`);
    const res = new AppError("too_many_requests", `Too many failed sign-ins; try again in ${retryAfter} s`).toResponse();
    res.headers.set("retry-after", String(retryAfter));
    return res;
  }
  if (!tokenMatches(input.token, token)) {
    recent.push(now);
    if (input.form) return redirect(`/signin?error=invalid&next=${encodeURIComponent(input.next)}`);
    throw new AppError("unauthorized", "That is not the API token");
  }
  failures.delete(key);
  const ttl = getConfig().SESSION_TTL_HOURS * 3600;
  const cookie = `${SESSION_COOKIE}=${createSessionValue(token, ttl, now)}; ${sessionCookieAttributes(isSecure(req), ttl)}`;
  if (input.form) return redirect(input.next, cookie);
  const expiresAt = new Date(now + ttl * 1000).toISOString();
  return Response.json({ signed_in: true, expires_at: expiresAt }, { headers: { "set-cookie": cookie, "cache-control": "no-store" } });
}

/** DELETE /api/session. */
export function signOut(): Response {
  return new Response(null, {
    status: 204,
    headers: { "set-cookie": `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0` },
  });
}

/** GET /api/session. */
export function sessionStatus(req: Request): Response {
  const token = getConfig().API_TOKEN;
  const signedIn = token ? verifySessionValue(token, readCookie(req, SESSION_COOKIE)) : true;
  return Response.json({ auth_required: Boolean(token), signed_in: signedIn }, { headers: { "cache-control": "no-store" } });
}
