import { z } from "zod";

export const judgeSettingsSchema = z
  .object({
    configured: z.boolean(),
    base_url: z.string().nullable().describe("OPENAI_BASE_URL; null means the provider's default"),
    api_key_set: z.boolean().describe("Whether OPENAI_API_KEY is set; the key itself is never returned"),
    default_model: z.string(),
    timeout_ms: z.number().int(),
    max_retries: z.number().int(),
    max_concurrency: z.number().int(),
    priced_models: z.array(z.string()).describe("Models with a price in JUDGE_PRICES"),
    context_tokens: z.number().int().describe("JUDGE_CONTEXT_TOKENS: context window assumed for a model not in the map"),
    context_tokens_by_model: z
      .record(z.string(), z.number().int())
      .describe("JUDGE_CONTEXT_TOKENS_BY_MODEL: context window per model; judge prompts are cut to fit it"),
  })
  .meta({ id: "JudgeSettings" });

export const connectionTestBody = z.object({
  model_name: z.string().trim().min(1).max(200).nullable().optional().describe("Model to test; default JUDGE_MODEL"),
});

export const connectionTestSchema = z
  .object({
    ok: z.boolean(),
    model: z.string(),
    latency_ms: z.number().int(),
    message: z.string(),
    concurrency_limit: z.number().int(),
  })
  .meta({ id: "JudgeConnectionTest" });
