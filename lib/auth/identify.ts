/**
 * Who the caller is, from the credential a request carries. With no credential configured at all (no
 * API_TOKEN, no active key) the server is in its one-person mode: everyone is an admin and `X-User-Id`
 * names them. Otherwise every request needs API_TOKEN (user `admin`), a user's API key, or a page session,
 * the user id comes from that credential alone, and wrong credentials count against the client's address.
 */
import { anyActiveKey, findActiveKey, findActiveKeyById, findLiveSession, touchApiKey } from "@/db/repositories/auth";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import { processSingleton } from "@/lib/process-state";
import { TOKEN_USER, type Caller, type Role, roles } from "./roles";
import { hashSecret, sameSecret } from "./secrets";
import { lockedFor, recordFailure } from "./throttle";

/** What a request presents, read off it by the route wrapper (lib/api) or the page proxy. */
export type Credential = {
  /** `Authorization: Bearer …`, when sent. */
  bearer?: string;
  /** The session cookie's value, when sent and the request is not cross-site. */
  sessionId?: string;
  /** `X-User-Id`: honoured only in the one-person mode. */
  claimedUser?: string;
  /** The client's address (lib/api/client-address.ts), for throttling. */
  client: string;
};

const REQUIRED_CACHE_MS = 5_000;
const state = processSingleton("auth.required", () => ({ answer: false, until: 0 }));

/**
 * Whether requests need a credential: API_TOKEN is set, or some key is active. The answer is kept for 5 s,
 * so a request costs no query for it; this process forgets it at once when it creates or revokes a key, and
 * other processes sharing a PostgreSQL store see the team's first key within 5 s. (The way back, from keys
 * to the open mode, does not happen: the last admin key cannot be revoked.)
 */
export async function authRequired(now = Date.now()): Promise<boolean> {
  if (getConfig().API_TOKEN) return true;
  if (state.until > now) return state.answer;
  const answer = await anyActiveKey();
  state.answer = answer;
  state.until = now + REQUIRED_CACHE_MS;
  return answer;
}

/** Forget the cached answer of authRequired (after creating or revoking a key, and in tests). */
export function forgetAuthRequired(): void {
  state.until = 0;
  epoch.value++;
}

const epoch = processSingleton("auth.epoch", () => ({ value: 0 }));

/**
 * A number that changes whenever this process creates or revokes a key or ends a session: open streams
 * compare it every second and check their credential again when it moved (lib/api/sse.ts).
 */
export function credentialEpoch(): number {
  return epoch.value;
}

function asRole(value: string): Role {
  return (roles as readonly string[]).includes(value) ? (value as Role) : "viewer";
}

function tooManyFailures(seconds: number): AppError {
  return new AppError("too_many_requests", `Too many failed credentials from this address; try again in ${seconds} s`, [{ path: "retry_after", message: String(seconds) }]);
}

/** The caller a secret (API_TOKEN or an API key) stands for, or undefined when it is neither. */
export async function callerForSecret(secret: string, now = Date.now()): Promise<Caller | undefined> {
  const token = getConfig().API_TOKEN;
  if (token && sameSecret(secret, token)) return { userId: TOKEN_USER, role: "admin", via: "token" };
  if (!secret.startsWith("tsk_") || secret.length > 200) return undefined;
  const found = await findActiveKey(hashSecret(secret));
  if (!found) return undefined;
  const stale = new Date(now - 60_000).toISOString();
  if (!found.key.lastUsedAt || found.key.lastUsedAt < stale) {
    void touchApiKey(found.key.id, new Date(now).toISOString(), stale).catch(() => undefined);
  }
  return { userId: found.user.name, role: asRole(found.user.role), via: "key", keyId: found.key.id };
}

/** The caller of a live page session, or undefined (unknown, signed out, expired, or its key revoked). */
export async function callerForSession(sessionId: string, now = Date.now()): Promise<Caller | undefined> {
  if (sessionId.length > 100) return undefined;
  const session = await findLiveSession(hashSecret(sessionId), new Date(now).toISOString());
  if (!session) return undefined;
  if (session.keyId !== null) {
    const found = await findActiveKeyById(session.keyId);
    if (!found) return undefined;
    // The user's role as it is now: a role changed on the People page applies to open sessions at once.
    return { userId: found.user.name, role: asRole(found.user.role), via: "session", keyId: found.key.id };
  }
  const token = getConfig().API_TOKEN;
  if (!token || !session.tokenHash || !sameSecret(session.tokenHash, hashSecret(token))) return undefined;
  return { userId: session.userName, role: "admin", via: "session" };
}

/** Who is calling; 401 without a valid credential, 429 while the client is locked out. */
export async function identify(credential: Credential, now = Date.now()): Promise<Caller> {
  if (!(await authRequired(now))) return { userId: credential.claimedUser?.trim() || "default", role: "admin", via: "open" };
  const wait = lockedFor(credential.client, now);
  if (wait) throw tooManyFailures(wait);
  if (credential.bearer !== undefined) {
    const caller = await callerForSecret(credential.bearer, now);
    if (caller) return caller;
    recordFailure(credential.client, now);
    throw new AppError("unauthorized", "Invalid bearer credential: send Authorization: Bearer <your API key>");
  }
  if (credential.sessionId) {
    const caller = await callerForSession(credential.sessionId, now);
    if (caller) return caller;
  }
  throw new AppError("unauthorized", "Missing credential: send Authorization: Bearer <your API key>, or sign in on the page");
}

/** 403 unless the caller's role allows what needs `needed`. */
export function requireRole(caller: Caller, needed: Role): void {
  if (roles.indexOf(caller.role) >= roles.indexOf(needed)) return;
  throw new AppError("forbidden", `This needs the ${needed} role; ${caller.userId} is ${caller.role === "admin" ? "an" : "a"} ${caller.role}`);
}
