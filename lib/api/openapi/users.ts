import { errorSchema, idParams } from "@/lib/schemas/common";
import { apiKeySchema, createKeyBody, createUserBody, createdApiKeySchema, meSchema, updateUserBody, userSchema } from "@/lib/schemas/users";
import { badRequest, conflictResponse, notFoundResponse } from "./shared";
import type { Operation } from "./types";

const tag = "People";
const adminOnly = { description: "The caller is not an admin", schema: errorSchema };

export const userOperations: Operation[] = [
  {
    method: "get",
    path: "/me",
    operationId: "getMe",
    summary: "Who the caller is: user id, role, and how they signed in",
    tag,
    responses: { 200: { description: "The caller", schema: meSchema } },
  },
  {
    method: "get",
    path: "/users",
    operationId: "listUsers",
    summary: "The team's people and their keys (prefixes only)",
    tag,
    responses: { 200: { description: "Users", schema: userSchema, array: true }, 403: adminOnly },
  },
  {
    method: "post",
    path: "/users",
    operationId: "createUser",
    summary: "Add a person with a role",
    description:
      "Roles: `viewer` reads; `annotator` also labels, imports, creates metrics and runs; `admin` also manages people and keys. " +
      "The name is the user id written on their labels, mappings and templates and never changes; `admin` (API_TOKEN's user) and " +
      "`default` (the one-person mode's) are reserved. While no credential is configured anyone may call this; after, admins only.",
    tag,
    body: createUserBody,
    responses: { 201: { description: "Created", schema: userSchema }, 400: badRequest, 403: adminOnly, 409: { description: "The name is taken or reserved", schema: errorSchema } },
  },
  {
    method: "patch",
    path: "/users/{id}",
    operationId: "updateUser",
    summary: "Change a person's role (their open sessions follow at once)",
    tag,
    params: idParams,
    body: updateUserBody,
    responses: {
      200: { description: "Updated", schema: userSchema },
      400: badRequest,
      403: adminOnly,
      404: notFoundResponse,
      409: { description: "The last admin with an active key cannot be demoted (without API_TOKEN)", schema: errorSchema },
    },
  },
  {
    method: "post",
    path: "/users/{id}/keys",
    operationId: "createApiKey",
    summary: "Create an API key for a person: the key is in this answer only",
    description:
      "Only the key's SHA-256 is stored. Send it as `Authorization: Bearer <key>`, or enter it once on the sign-in page. Once any key " +
      "exists, every request needs a credential and `X-User-Id` is ignored; so while none is configured, the first key must be an admin's (409 otherwise). " +
      "That first key, made from the one-person mode, also signs its creator in: the answer sets the session cookie (as `POST /session` " +
      "would), so the browser that made it keeps working as that admin.",
    tag,
    params: idParams,
    body: createKeyBody,
    responses: { 201: { description: "The new key", schema: createdApiKeySchema }, 400: badRequest, 403: adminOnly, 404: notFoundResponse, 409: conflictResponse },
  },
  {
    method: "delete",
    path: "/keys/{id}",
    operationId: "revokeApiKey",
    summary: "Revoke a key: refused from now on, and page sessions signed in with it end",
    tag,
    params: idParams,
    responses: {
      204: { description: "Revoked (also when it already was)" },
      403: adminOnly,
      404: notFoundResponse,
      409: { description: "The last active admin key cannot be revoked (without API_TOKEN)", schema: errorSchema },
    },
  },
];

export { apiKeySchema };
