import { errorSchema } from "@/lib/schemas/common";
import { sessionStatusSchema, signInBody, signInResultSchema } from "@/lib/schemas/session";
import type { Operation } from "./types";

const tag = "Session";

export const sessionOperations: Operation[] = [
  {
    method: "get",
    path: "/session",
    operationId: "getSession",
    summary: "Whether sign-in is required and whether this browser is signed in",
    tag,
    public: true,
    responses: { 200: { description: "Session status", schema: sessionStatusSchema } },
  },
  {
    method: "post",
    path: "/session",
    operationId: "signIn",
    summary: "Sign a browser in with an API key (or API_TOKEN)",
    description:
      "With credentials configured, pages need a session. Send `{token}` (an API key or API_TOKEN) as JSON (200 with the cookie) " +
      "or as the sign-in page's form (`application/x-www-form-urlencoded` with `token` and `next`: 303 to `next` — a path on this " +
      "site, normalised; anything else, control characters or backslashes included, goes to `/` — or back to " +
      "`/signin?error=invalid`). The cookie `turnscope_session` is HttpOnly, SameSite=Strict, holds a random session id stored " +
      "hashed on the server, and expires after `SESSION_TTL_HOURS`; sign-out, revoking the key, or changing API_TOKEN ends it. " +
      "Ten failed attempts (sign-ins and wrong bearer credentials alike) from one client address within five minutes answer 429 " +
      "with `Retry-After`. Sign-in from another site (Fetch Metadata `cross-site`) is refused with 403.",
    tag,
    public: true,
    body: signInBody,
    responses: {
      200: { description: "Signed in; `Set-Cookie` carries the session", schema: signInResultSchema },
      303: { description: "Form sign-in: redirect to `next` (or back to the sign-in page with an error)" },
      400: { description: "No token in the body", schema: errorSchema },
      401: { description: "Not an API key of this server", schema: errorSchema },
      403: { description: "Sign-in from another site", schema: errorSchema },
      409: { description: "No credential is configured: nothing to sign in to", schema: errorSchema },
      429: { description: "Too many failed attempts", schema: errorSchema },
    },
  },
  {
    method: "delete",
    path: "/session",
    operationId: "signOut",
    summary: "Sign out: the session ends on the server and the cookie is cleared",
    tag,
    public: true,
    responses: { 204: { description: "Signed out" } },
  },
];
