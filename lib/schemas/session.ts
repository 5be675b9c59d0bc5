import { z } from "zod";

export const signInBody = z.object({ token: z.string().min(1).describe("The server's API_TOKEN") });

export const signInResultSchema = z
  .object({ signed_in: z.literal(true), expires_at: z.string().describe("When the session cookie expires (ISO 8601)") })
  .meta({ id: "SignInResult" });

export const sessionStatusSchema = z
  .object({
    auth_required: z.boolean().describe("Whether the server has API_TOKEN set"),
    signed_in: z.boolean().describe("Whether this request carries a valid session cookie (always true when no sign-in is required)"),
  })
  .meta({ id: "SessionStatus" });
