import { z } from "zod";

export const healthSchema = z
  .object({
    status: z.enum(["ok", "degraded"]),
    database: z.enum(["ok", "unreachable"]),
    judge: z
      .object({
        configured: z.boolean(),
        base_url: z.string().nullable().describe("OPENAI_BASE_URL with any credential in it masked (user, password, query values), or null for the provider's default"),
        default_model: z.string(),
      })
      .optional()
      .describe("Only for a caller with a credential (or while the server is open): a load balancer's probe without one gets status, database and version"),
    version: z.string(),
  })
  .meta({ id: "Health" });
