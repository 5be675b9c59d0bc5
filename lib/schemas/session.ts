import { z } from "zod";

export const signInBody = z.object({ token: z.string().min(1).describe("An API key, or the server's API_TOKEN") });

export const signInResultSchema = z
  .object({
    signed_in: z.literal(true),
    expires_at: z.string().describe("When the session cookie expires (ISO 8601)"),
    user: z.string().describe("The user id the session speaks for"),
    role: z.enum(["admin", "annotator", "viewer"]),
  })
  .meta({ id: "SignInResult" });

export const sessionStatusSchema = z
  .object({
    auth_required: z.boolean().describe("Whether credentials are configured (API_TOKEN or any API key)"),
    signed_in: z.boolean().describe("Whether this request carries a live session cookie (always true when no sign-in is required)"),
    user: z.string().optional().describe("The signed-in user"),
    role: z.enum(["admin", "annotator", "viewer"]).optional(),
  })
  .meta({ id: "SessionStatus" });
