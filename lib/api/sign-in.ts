/**
 * The sign-in endpoint: a key (or API_TOKEN) checked once becomes a server-side session whose random id
 * is the cookie (lib/auth/sessions.ts); sign-out ends that session for good. Wrong keys count against the
 * client's address (lib/auth/throttle.ts), never against an address a header claims.
 */
import { authRequired, callerForSession, closeSession, openSession } from "@/lib/auth";
import { AppError } from "@/lib/errors";
import { clientAddress } from "./client-address";
import { readCappedBody } from "./route";
import { SESSION_COOKIE, notCrossSite, readCookie, safeNextPath, sessionCookieAttributes } from "./session";

function isSecure(req: Request): boolean {
  return new URL(req.url).protocol === "https:" || req.headers.get("x-forwarded-proto") === "https";
}

type SignInInput = { token: string; next: string; form: boolean };

/** A sign-in body is a key and a path: anything near this size is not one. */
const MAX_SIGN_IN_BYTES = 64 * 1024;

async function readInput(req: Request): Promise<SignInInput> {
  const type = req.headers.get("content-type") ?? "";
  const bytes = await readCappedBody(req, MAX_SIGN_IN_BYTES, "");
  if (type.includes("application/x-www-form-urlencoded") || type.includes("multipart/form-data")) {
    const form = await new Response(new Uint8Array(bytes), { headers: { "content-type": type } }).formData().catch(() => null);
    if (!form) throw new AppError("bad_request", "Unreadable form body");
    return { token: String(form.get("token") ?? ""), next: safeNextPath(String(form.get("next") ?? "/")), form: true };
  }
  const text = bytes.toString("utf8");
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    throw new AppError("bad_request", "Request body is not valid JSON", [{ path: "(root)", message: "not valid JSON" }]);
  }
  const token = (body as { token?: unknown } | undefined)?.token;
  if (typeof token !== "string" || token === "") {
    throw new AppError("bad_request", "Invalid request body (token: required string, an API key or API_TOKEN)", [{ path: "token", message: "required string" }]);
  }
  return { token, next: "/", form: false };
}

function redirect(location: string, cookie?: string): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  if (cookie) headers.append("set-cookie", cookie);
  return new Response(null, { status: 303, headers });
}

/**
 * The session cookie for a key its creator just made: the first admin key ends the one-person mode, so the
 * browser that made it (on the People page) would have no credential for its very next request.
 */
export async function sessionCookieForNewKey(req: Request, key: string): Promise<string> {
  const opened = await openSession(key, clientAddress(req));
  return `${SESSION_COOKIE}=${opened.sessionId}; ${sessionCookieAttributes(isSecure(req), opened.ttlSeconds)}`;
}

/** POST /api/session. */
export async function signIn(req: Request): Promise<Response> {
  // A sign-in form on another site must not sign this browser in (login CSRF).
  if (!notCrossSite(req)) throw new AppError("forbidden", "Sign-in from another site is refused");
  const input = await readInput(req);
  let opened: Awaited<ReturnType<typeof openSession>>;
  try {
    opened = await openSession(input.token, clientAddress(req));
  } catch (error) {
    if (input.form && error instanceof AppError && (error.code === "unauthorized" || error.code === "too_many_requests")) {
      return redirect(`/signin?error=${error.code === "unauthorized" ? "invalid" : "locked"}&next=${encodeURIComponent(input.next)}`);
    }
    throw error;
  }
  const cookie = `${SESSION_COOKIE}=${opened.sessionId}; ${sessionCookieAttributes(isSecure(req), opened.ttlSeconds)}`;
  if (input.form) return redirect(input.next, cookie);
  return Response.json(
    { signed_in: true, expires_at: opened.expiresAt, user: opened.caller.userId, role: opened.caller.role },
    { headers: { "set-cookie": cookie, "cache-control": "no-store" } },
  );
}

/** DELETE /api/session: the session is ended on the server, so a kept copy of the cookie is refused too. */
export async function signOut(req: Request): Promise<Response> {
  await closeSession(readCookie(req, SESSION_COOKIE));
  return new Response(null, {
    status: 204,
    headers: { "set-cookie": `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0` },
  });
}

/** GET /api/session. */
export async function sessionStatus(req: Request): Promise<Response> {
  const required = await authRequired();
  const sessionId = readCookie(req, SESSION_COOKIE);
  const caller = required && sessionId ? await callerForSession(sessionId) : undefined;
  return Response.json(
    { auth_required: required, signed_in: required ? Boolean(caller) : true, ...(caller ? { user: caller.userId, role: caller.role } : {}) },
    { headers: { "cache-control": "no-store" } },
  );
}
