/** Page sign-in: a key (or API_TOKEN) entered once becomes a server-side session; sign-out ends it for good. */
import { insertSession, pruneSessions, revokeSession } from "@/db/repositories/auth";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import { authRequired, callerForSecret, forgetAuthRequired } from "./identify";
import { hashSecret, newSessionId } from "./secrets";
import { lockedFor, recordFailure } from "./throttle";
import type { Caller } from "./roles";

/**
 * Check a key (or API_TOKEN) once and open a session for its user: the session id (the cookie's value,
 * never stored) and when it expires. Wrong keys count against the client; a locked client gets 429.
 */
export async function openSession(secret: string, client: string, now = Date.now()): Promise<{ sessionId: string; expiresAt: string; ttlSeconds: number; caller: Caller }> {
  if (!(await authRequired(now))) throw new AppError("conflict", "Sign-in is not needed: no API_TOKEN and no API key is configured");
  const wait = lockedFor(client, now);
  if (wait) throw new AppError("too_many_requests", `Too many failed sign-ins; try again in ${wait} s`, [{ path: "retry_after", message: String(wait) }]);
  const caller = await callerForSecret(secret, now);
  if (!caller) {
    recordFailure(client, now);
    throw new AppError("unauthorized", "That is not an API key of this server");
  }
  const ttlSeconds = getConfig().SESSION_TTL_HOURS * 3600;
  const expiresAt = new Date(now + ttlSeconds * 1000).toISOString();
  const sessionId = newSessionId();
  const token = getConfig().API_TOKEN;
  await insertSession({
    idHash: hashSecret(sessionId),
    userName: caller.userId,
    role: caller.role,
    keyId: caller.keyId ?? null,
    tokenHash: caller.via === "token" && token ? hashSecret(token) : null,
    expiresAt,
  });
  // Sessions that ended more than a day ago are forgotten now and then.
  if (Math.random() < 0.05) void pruneSessions(new Date(now - 86_400_000).toISOString()).catch(() => undefined);
  return { sessionId, expiresAt, ttlSeconds, caller };
}

/** End a session (sign-out): its cookie is refused from now on, even if a copy was kept. */
export async function closeSession(sessionId: string | undefined, now = Date.now()): Promise<void> {
  if (!sessionId || sessionId.length > 100) return;
  await revokeSession(hashSecret(sessionId), new Date(now).toISOString());
  forgetAuthRequired();
}
