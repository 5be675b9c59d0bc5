/** Users, their API keys and page sessions: the only place the users, api_keys and sessions tables are queried. */
import "server-only";
import { and, asc, count, eq, gt, isNull, lt, or } from "drizzle-orm";
import type { ApiKeyRow, SessionRow, UserRow } from "../schema";
import { changes, database, first, prepared, rows, transaction } from "../store";
import { apiKeysTable, sessionsTable, usersTable } from "../tables";

export async function insertUser(values: { name: string; role: string }): Promise<UserRow | undefined> {
  return transaction(function* (tx) {
    const [existing] = yield* rows(tx.select({ id: usersTable.id }).from(usersTable).where(eq(usersTable.name, values.name)));
    if (existing) return undefined;
    const [row] = yield* rows(tx.insert(usersTable).values(values).returning());
    return row;
  });
}

export async function listUserRows(): Promise<UserRow[]> {
  const db = await database();
  return db.select().from(usersTable).orderBy(asc(usersTable.name));
}

export async function getUserRow(id: number): Promise<UserRow | undefined> {
  const db = await database();
  return first(await db.select().from(usersTable).where(eq(usersTable.id, id)));
}

export async function getUserRowByName(name: string): Promise<UserRow | undefined> {
  const db = await database();
  return first(await db.select().from(usersTable).where(eq(usersTable.name, name)));
}

/**
 * Change a user's role, unless that would leave active keys and no admin able to use one (`last_admin`).
 * Runs in one transaction so two demotions cannot both pass the check.
 */
export async function updateUserRole(id: number, role: string, opts: { keepLastAdmin: boolean }): Promise<UserRow | "last_admin" | undefined> {
  return transaction(function* (tx) {
    const [user] = yield* rows(tx.select().from(usersTable).where(eq(usersTable.id, id)));
    if (!user) return undefined;
    if (opts.keepLastAdmin && user.role === "admin" && role !== "admin") {
      const others = yield* activeAdminKeysExcept(tx, { userId: id });
      const mine = yield* rows(tx.select({ n: count() }).from(apiKeysTable).where(and(eq(apiKeysTable.userId, id), isNull(apiKeysTable.revokedAt))));
      if (others === 0 && Number(mine[0]?.n ?? 0) > 0) return "last_admin";
    }
    const [row] = yield* rows(tx.update(usersTable).set({ role, updatedAt: new Date().toISOString() }).where(eq(usersTable.id, id)).returning());
    return row;
  });
}

function* activeAdminKeysExcept(tx: Parameters<Parameters<typeof transaction>[0]>[0], except: { userId?: number; keyId?: number }) {
  const conditions = [isNull(apiKeysTable.revokedAt), eq(usersTable.role, "admin")];
  const found = yield* rows(
    tx
      .select({ id: apiKeysTable.id, userId: apiKeysTable.userId })
      .from(apiKeysTable)
      .innerJoin(usersTable, eq(usersTable.id, apiKeysTable.userId))
      .where(and(...conditions)),
  );
  return found.filter((k) => k.userId !== except.userId && k.id !== except.keyId).length;
}

export async function insertApiKey(values: { userId: number; name: string; prefix: string; keyHash: string }): Promise<ApiKeyRow> {
  const db = await database();
  const [row] = await db.insert(apiKeysTable).values(values).returning();
  return row;
}

export async function listApiKeyRows(userId?: number): Promise<ApiKeyRow[]> {
  const db = await database();
  const query = db.select().from(apiKeysTable);
  return (userId === undefined ? query : query.where(eq(apiKeysTable.userId, userId))).orderBy(asc(apiKeysTable.id));
}

/** The active key with this hash and its user, or undefined (unknown or revoked). */
export async function findActiveKey(keyHash: string): Promise<{ key: ApiKeyRow; user: UserRow } | undefined> {
  const db = await database();
  const found = first(
    await db
      .select({ key: apiKeysTable, user: usersTable })
      .from(apiKeysTable)
      .innerJoin(usersTable, eq(usersTable.id, apiKeysTable.userId))
      .where(and(eq(apiKeysTable.keyHash, keyHash), isNull(apiKeysTable.revokedAt))),
  );
  return found;
}

/** The active key with this id and its user (a session signed in with a key lives only as long as the key). */
export async function findActiveKeyById(id: number): Promise<{ key: ApiKeyRow; user: UserRow } | undefined> {
  const db = await database();
  return first(
    await db
      .select({ key: apiKeysTable, user: usersTable })
      .from(apiKeysTable)
      .innerJoin(usersTable, eq(usersTable.id, apiKeysTable.userId))
      .where(and(eq(apiKeysTable.id, id), isNull(apiKeysTable.revokedAt))),
  );
}

/** Whether any key is active: with one, every request must carry a credential. Prepared: it runs on most requests. */
export async function anyActiveKey(): Promise<boolean> {
  const found = await prepared("auth.any_active_key", (db) => db.select({ id: apiKeysTable.id }).from(apiKeysTable).where(isNull(apiKeysTable.revokedAt)).limit(1), {});
  return found.length > 0;
}

/** Record a key's use at most once a minute, so reads do not each write. */
export async function touchApiKey(id: number, now: string, before: string): Promise<void> {
  const db = await database();
  await db
    .update(apiKeysTable)
    .set({ lastUsedAt: now })
    .where(and(eq(apiKeysTable.id, id), or(isNull(apiKeysTable.lastUsedAt), lt(apiKeysTable.lastUsedAt, before))));
}

/**
 * Revoke a key and end the sessions signed in with it. Refused (`last_admin`) when it is the last active
 * admin key and no API_TOKEN stands in: nobody could manage the team any more, or (with no key left)
 * the server would silently fall back to the open one-person mode.
 */
export async function revokeApiKey(id: number, now: string, opts: { keepLastAdmin: boolean }): Promise<ApiKeyRow | "last_admin" | undefined> {
  return transaction(function* (tx) {
    const [key] = yield* rows(tx.select({ key: apiKeysTable, role: usersTable.role }).from(apiKeysTable).innerJoin(usersTable, eq(usersTable.id, apiKeysTable.userId)).where(eq(apiKeysTable.id, id)));
    if (!key) return undefined;
    if (key.key.revokedAt) return key.key;
    if (opts.keepLastAdmin && key.role === "admin") {
      const otherAdmins = yield* activeAdminKeysExcept(tx, { keyId: id });
      if (otherAdmins === 0) return "last_admin";
    }
    const [row] = yield* rows(tx.update(apiKeysTable).set({ revokedAt: now }).where(eq(apiKeysTable.id, id)).returning());
    yield* rows(tx.update(sessionsTable).set({ revokedAt: now }).where(and(eq(sessionsTable.keyId, id), isNull(sessionsTable.revokedAt))).returning({ id: sessionsTable.id }));
    return row;
  });
}

export async function insertSession(values: { idHash: string; userName: string; role: string; keyId: number | null; tokenHash: string | null; expiresAt: string }): Promise<SessionRow> {
  const db = await database();
  const [row] = await db.insert(sessionsTable).values(values).returning();
  return row;
}

/** The live session with this id hash: not revoked, not expired. */
export async function findLiveSession(idHash: string, now: string): Promise<SessionRow | undefined> {
  const db = await database();
  return first(
    await db
      .select()
      .from(sessionsTable)
      .where(and(eq(sessionsTable.idHash, idHash), isNull(sessionsTable.revokedAt), gt(sessionsTable.expiresAt, now))),
  );
}

export async function revokeSession(idHash: string, now: string): Promise<boolean> {
  const db = await database();
  return changes(await db.update(sessionsTable).set({ revokedAt: now }).where(and(eq(sessionsTable.idHash, idHash), isNull(sessionsTable.revokedAt)))) > 0;
}

/** Forget sessions that ended more than a day ago. */
export async function pruneSessions(before: string): Promise<number> {
  const db = await database();
  return changes(await db.delete(sessionsTable).where(lt(sessionsTable.expiresAt, before)));
}
