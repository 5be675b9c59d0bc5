/** The judge's view of the configuration: provider, default model, limits and prices. */
import { z } from "zod";
import { getConfig } from "@/lib/config";

const pricesSchema = z.record(
  z.string(),
  z.object({ input: z.number().nonnegative(), output: z.number().nonnegative() }),
);
export type PriceTable = z.infer<typeof pricesSchema>;

const contextWindowsSchema = z.record(z.string(), z.number().int().positive());

export type JudgeConfig = {
  configured: boolean;
  baseURL: string | undefined;
  apiKey: string | undefined;
  defaultModel: string;
  /** The ceiling of a call's time limit, and the limit until the provider's latency is learnt. */
  timeoutMs: number;
  /** The learnt time limit is never below this. */
  timeoutFloorMs: number;
  /** The learnt time limit is this multiple of the observed p99. */
  timeoutP99Multiple: number;
  /** Hedge a call slower than the observed p95 with a second request. */
  hedge: boolean;
  maxRetries: number;
  /** Retries of a call answered 429 (their own count, apart from maxRetries). */
  maxRateLimitRetries: number;
  maxConcurrency: number;
  /** Provider calls on the judge thread (lib/judge/call-thread.ts) rather than the server's event loop. */
  callsOnThread: boolean;
  prices: PriceTable;
  /** Context window in tokens of a model not named in `contextTokensByModel`. */
  contextTokens: number;
  contextTokensByModel: Record<string, number>;
};

/**
 * A URL as it may be shown (health, settings, logs): a user name, password or query value in it is a
 * credential some providers take there (`https://user:key@host/v1`, `?api-key=…`), so each is masked.
 */
export function maskedUrl(url: string | undefined): string | undefined {
  if (!url) return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "(not a URL)";
  }
  if (parsed.username) parsed.username = "***";
  if (parsed.password) parsed.password = "***";
  for (const name of [...new Set(parsed.searchParams.keys())]) parsed.searchParams.set(name, "***");
  return parsed.toString().replaceAll("%2A%2A%2A", "***");
}

export const notConfiguredMessage = "no judge model configured: set OPENAI_API_KEY or OPENAI_BASE_URL";

let cached: { source: ReturnType<typeof getConfig>; value: JudgeConfig } | undefined;

/** Parsed once per configuration; an invalid JUDGE_PRICES is a start-up error, named plainly. */
export function getJudgeConfig(): JudgeConfig {
  const env = getConfig();
  if (cached?.source === env) return cached.value;
  let prices: PriceTable = {};
  if (env.JUDGE_PRICES) {
    let raw: unknown;
    try {
      raw = JSON.parse(env.JUDGE_PRICES);
    } catch {
      throw new Error('JUDGE_PRICES must be JSON like {"gpt-4o-mini": {"input": 0.15, "output": 0.6}}');
    }
    const parsed = pricesSchema.safeParse(raw);
    if (!parsed.success) {
      throw new Error('JUDGE_PRICES must map model names to {"input": usd_per_million, "output": usd_per_million}');
    }
    prices = parsed.data;
  }
  let contextTokensByModel: Record<string, number> = {};
  if (env.JUDGE_CONTEXT_TOKENS_BY_MODEL) {
    let raw: unknown;
    try {
      raw = JSON.parse(env.JUDGE_CONTEXT_TOKENS_BY_MODEL);
    } catch {
      throw new Error('JUDGE_CONTEXT_TOKENS_BY_MODEL must be JSON like {"gpt-4o-mini": 128000, "llama3.1": 8192}');
    }
    const parsed = contextWindowsSchema.safeParse(raw);
    if (!parsed.success) throw new Error("JUDGE_CONTEXT_TOKENS_BY_MODEL must map model names to positive whole numbers of tokens");
    contextTokensByModel = parsed.data;
  }
  const value: JudgeConfig = {
    configured: Boolean(env.OPENAI_BASE_URL || env.OPENAI_API_KEY),
    baseURL: env.OPENAI_BASE_URL,
    apiKey: env.OPENAI_API_KEY,
    defaultModel: env.JUDGE_MODEL,
    timeoutMs: env.JUDGE_TIMEOUT_MS,
    timeoutFloorMs: env.JUDGE_TIMEOUT_FLOOR_MS,
    timeoutP99Multiple: env.JUDGE_TIMEOUT_P99_MULTIPLE,
    hedge: env.JUDGE_HEDGE,
    maxRetries: env.JUDGE_MAX_RETRIES,
    maxRateLimitRetries: env.JUDGE_MAX_RATE_LIMIT_RETRIES ?? (env.JUDGE_MAX_RETRIES === 0 ? 0 : 8),
    maxConcurrency: env.JUDGE_MAX_CONCURRENCY,
    callsOnThread: env.JUDGE_THREAD,
    prices,
    contextTokens: env.JUDGE_CONTEXT_TOKENS,
    contextTokensByModel,
  };
  cached = { source: env, value };
  return value;
}

/** The model a cell uses: the run's override, else the metric's, else the default. */
export function resolveModelName(...candidates: Array<string | null | undefined>): string {
  for (const c of candidates) if (c && c.trim()) return c.trim();
  return getJudgeConfig().defaultModel;
}

/** USD cost of the tokens for a model, or null when the price table does not list it. */
export function costOf(model: string, inputTokens: number, outputTokens: number): number | null {
  const price = getJudgeConfig().prices[model];
  if (!price) return null;
  return (inputTokens * price.input + outputTokens * price.output) / 1_000_000;
}

/** The context window in tokens of a model: its JUDGE_CONTEXT_TOKENS_BY_MODEL entry, else JUDGE_CONTEXT_TOKENS. */
export function contextTokensFor(model: string): number {
  const c = getJudgeConfig();
  return Object.hasOwn(c.contextTokensByModel, model) ? c.contextTokensByModel[model] : c.contextTokens;
}
