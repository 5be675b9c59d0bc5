import { z } from "zod";

export const healthSchema = z
  .object({
    status: z.enum(["ok", "degraded"]),
    database: z.enum(["ok", "unreachable"]),
    judge: z.object({
      configured: z.boolean(),
      base_url: z.string().nullable().describe("OPENAI_BASE_URL, or null for the provider's default"),
      default_model: z.string(),
    }),
    version: z.string(),
  })
  .meta({ id: "Health" });
