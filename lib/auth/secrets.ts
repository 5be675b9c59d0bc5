/** Random credentials and their stored form: only a SHA-256 of a key or session id is ever stored. */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** SHA-256 hex of a secret, as stored and looked up. */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** A new API key (`tsk_` + 32 random bytes) and the prefix shown on the People page to tell keys apart. */
export function newApiKey(): { key: string; prefix: string } {
  const key = `tsk_${randomBytes(32).toString("base64url")}`;
  return { key, prefix: key.slice(0, 12) };
}

/** A new page session id (the cookie's value). */
export function newSessionId(): string {
  return randomBytes(32).toString("base64url");
}

/** Constant-time comparison of two texts. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
