/** The judge configuration as the settings page shows it (never the key), and a live connection test. */
import { getJudgeConfig, maskedUrl, resolveModelName } from "./config";
import { limiterFor } from "./limiter";
import { judge } from "./judge";
import { sideUsageTotals } from "./side-usage";

export type JudgeSettings = {
  configured: boolean;
  base_url: string | null;
  api_key_set: boolean;
  default_model: string;
  timeout_ms: number;
  max_retries: number;
  max_concurrency: number;
  priced_models: string[];
  context_tokens: number;
  context_tokens_by_model: Record<string, number>;
  side_calls: ReturnType<typeof sideUsageTotals>;
};

export function judgeSettings(): JudgeSettings {
  const c = getJudgeConfig();
  return {
    configured: c.configured,
    base_url: maskedUrl(c.baseURL) ?? null,
    api_key_set: Boolean(c.apiKey),
    default_model: c.defaultModel,
    timeout_ms: c.timeoutMs,
    max_retries: c.maxRetries,
    max_concurrency: c.maxConcurrency,
    priced_models: Object.keys(c.prices),
    context_tokens: c.contextTokens,
    context_tokens_by_model: c.contextTokensByModel,
    side_calls: sideUsageTotals(),
  };
}

export type ConnectionTest = {
  ok: boolean;
  model: string;
  latency_ms: number;
  message: string;
  /** The limiter's current ceiling for this model (lower than max_concurrency after rate limits). */
  concurrency_limit: number;
};

/** One small structured-output call through the same path as every verdict (retries, limiter, parsing). */
export async function testJudgeConnection(model?: string | null): Promise<ConnectionTest> {
  const name = resolveModelName(model);
  const outcome = await judge({
    model: name,
    system: "You are checking a connection. Answer with the JSON requested.",
    prompt: 'Reply with {"value": true, "reasoning": "ok"}.',
    outputType: "checkbox",
    noCache: true,
  });
  return {
    ok: outcome.status === "completed",
    model: name,
    latency_ms: outcome.latencyMs,
    message: outcome.status === "completed" ? "The judge answered with a valid structured verdict." : (outcome.error ?? "failed"),
    concurrency_limit: limiterFor(name, getJudgeConfig().maxConcurrency).currentLimit,
  };
}
