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
    side_calls: z
      .object({
        since: z.string().describe("When this server process started counting"),
        import_feedback: z
          .object({ judge_calls: z.number().int(), input_tokens: z.number().int(), output_tokens: z.number().int(), cost_usd: z.number().nullable() })
          .describe("Judge calls that wrote feedback on refused imports (`get_feedback`), answered or not; cost from JUDGE_PRICES, null once a model without a price answered"),
        import_mapping: z
          .object({ judge_calls: z.number().int(), input_tokens: z.number().int(), output_tokens: z.number().int(), cost_usd: z.number().nullable() })
          .describe("Judge calls that wrote a mapping for a file nothing else read (`get_feedback`, at most 3 rounds a file), answered or not"),
      })
      .describe("Judge calls made outside any run, generation, comparison or alignment, counted by this server process since it started (each import's own figure is its `llm_feedback.usage`)"),
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
