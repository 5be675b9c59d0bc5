/** People of a team and their API keys, managed by admins (the People page, `/api/users`, `/api/keys`). */
import { insertApiKey, insertUser, listApiKeyRows, listUserRows, revokeApiKey, updateUserRole, getUserRow, anyActiveKey } from "@/db/repositories/auth";
import type { ApiKeyRow, UserRow } from "@/db/schema";
import { getConfig } from "@/lib/config";
import { AppError, notFound } from "@/lib/errors";
import { forgetAuthRequired } from "./identify";
import type { Role } from "./roles";
import { hashSecret, newApiKey } from "./secrets";

export type ApiKeyView = { id: number; user_id: number; name: string; prefix: string; created_at: string; last_used_at: string | null; revoked_at: string | null };
export type UserView = { id: number; name: string; role: Role; created_at: string; keys: ApiKeyView[] };

function keyView(row: ApiKeyRow): ApiKeyView {
  return { id: row.id, user_id: row.userId, name: row.name, prefix: row.prefix, created_at: row.createdAt, last_used_at: row.lastUsedAt, revoked_at: row.revokedAt };
}

function userView(row: UserRow, keys: ApiKeyRow[]): UserView {
  return { id: row.id, name: row.name, role: row.role as Role, created_at: row.createdAt, keys: keys.filter((k) => k.userId === row.id).map(keyView) };
}

/** Without API_TOKEN, the last admin key must stay: revoking it would lock the team out or reopen the server. */
const keepLastAdmin = () => !getConfig().API_TOKEN;

export async function createUser(input: { name: string; role: Role }): Promise<UserView> {
  if (input.name === "default" || input.name === "admin") {
    throw new AppError("conflict", `The name "${input.name}" is reserved (${input.name === "admin" ? "API_TOKEN signs in as it" : "the one-person mode's user"})`, [{ path: "name", message: "reserved" }]);
  }
  const row = await insertUser(input);
  if (!row) throw new AppError("conflict", `A user named "${input.name}" already exists`, [{ path: "name", message: "already exists" }]);
  return userView(row, []);
}

export async function listUsers(): Promise<UserView[]> {
  const [users, keys] = await Promise.all([listUserRows(), listApiKeyRows()]);
  return users.map((u) => userView(u, keys));
}

export async function setUserRole(id: number, role: Role): Promise<UserView> {
  const result = await updateUserRole(id, role, { keepLastAdmin: keepLastAdmin() });
  if (result === undefined) throw notFound("User", id);
  if (result === "last_admin") throw new AppError("conflict", "This is the last admin with an active key: make someone else an admin first", [{ path: "role", message: "last admin" }]);
  return userView(result, await listApiKeyRows(id));
}

/**
 * A new key for a user: the key itself is in this answer only (it is stored hashed). While no credential
 * is configured, the first key must be an admin's, or nobody could manage the team once keys are required.
 */
export async function createKey(userId: number, name: string | undefined): Promise<ApiKeyView & { key: string }> {
  const user = await getUserRow(userId);
  if (!user) throw notFound("User", userId);
  if (user.role !== "admin" && !getConfig().API_TOKEN && !(await anyActiveKey())) {
    throw new AppError("conflict", "The first key must belong to an admin: once a key exists every request needs one, and someone must be able to manage the team", [
      { path: "user_id", message: "not an admin" },
    ]);
  }
  const { key, prefix } = newApiKey();
  const row = await insertApiKey({ userId, name: name?.trim() || "key", prefix, keyHash: hashSecret(key) });
  forgetAuthRequired();
  return { ...keyView(row), key };
}

export async function revokeKey(id: number): Promise<void> {
  const result = await revokeApiKey(id, new Date().toISOString(), { keepLastAdmin: keepLastAdmin() });
  if (result === undefined) throw notFound("API key", id);
  if (result === "last_admin") throw new AppError("conflict", "This is the last active admin key: create another admin key first");
  forgetAuthRequired();
}
