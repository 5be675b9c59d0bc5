/** Users, API keys and the caller (`/users`, `/keys`, `/me`). */
import { z } from "zod";
import { isoTimestamp } from "./common";

export const roleSchema = z.enum(["admin", "annotator", "viewer"]).describe("viewer: reads; annotator: also labels, imports and runs; admin: also manages people and keys");

export const createUserBody = z.object({
  name: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/, "must be 1-64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit")
    .describe("The user id written on their labels, mappings and templates; it never changes"),
  role: roleSchema,
});

export const updateUserBody = z.object({ role: roleSchema });

export const createKeyBody = z
  .object({ name: z.string().trim().max(100, "at most 100 characters").optional().describe("What the key is for, e.g. `laptop` or `ci`") })
  .optional()
  .transform((v) => v ?? {});

export const apiKeySchema = z
  .object({
    id: z.number().int(),
    user_id: z.number().int(),
    name: z.string(),
    prefix: z.string().describe("The key's first characters, to tell keys apart"),
    created_at: isoTimestamp,
    last_used_at: isoTimestamp.nullable(),
    revoked_at: isoTimestamp.nullable(),
  })
  .meta({ id: "ApiKey" });

export const createdApiKeySchema = apiKeySchema
  .extend({ key: z.string().describe("The key itself: shown in this answer only, stored hashed") })
  .meta({ id: "CreatedApiKey" });

export const userSchema = z
  .object({ id: z.number().int(), name: z.string(), role: roleSchema, created_at: isoTimestamp, keys: z.array(apiKeySchema) })
  .meta({ id: "User" });

export const meSchema = z
  .object({
    user: z.string().describe("The caller's user id"),
    role: roleSchema,
    via: z.enum(["open", "token", "key", "session"]).describe("open: no credential is configured (X-User-Id names the caller); token: API_TOKEN; key: an API key; session: a page sign-in"),
    auth_required: z.boolean(),
  })
  .meta({ id: "Me" });
