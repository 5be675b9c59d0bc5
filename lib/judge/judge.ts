/**
 * One judge call, end to end: cache → limiter → AI SDK structured-output call (with retries and a
 * time limit) → parse and validate by output type → one repair attempt. Failures are outcomes, not
 * exceptions; only the caller's own abort (cancel) is thrown.
 */
import { createHash } from "node:crypto";
import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { LanguageModel } from "ai";
import { readJudgeCache, writeJudgeCache, type JudgeCacheEntry } from "@/db/repositories/judge";
import type { OutputType } from "@/lib/vocabulary";
import { contextTokensFor, getJudgeConfig, notConfiguredMessage, type JudgeConfig } from "./config";
import { callModel, openAIChatModel, type CallResult, type Turn } from "./call";
import { callOnThread } from "./call-thread";
import { extractJson } from "./extract-json";
import { limiterFor } from "./limiter";
import { classifyError, realRetryDeps, withRetries, type RetryDeps } from "./retry";
import { HEDGE_FLOOR_MS, hedgedCall, HedgedCallError, trackerFor, type Clock, type Role, type TailSettings } from "./tail";
import { checkVerdict, verdictSchema, type JsonSchema } from "./verdicts";

export type JudgeRequest = {
  model: string;
  system?: string;
  prompt: string;
  outputType: OutputType;
  outputSchema?: unknown;
  /** The runner's cancel signal: aborting it aborts the call in flight. */
  signal?: AbortSignal;
  /** Skip the cache read (the fresh verdict is still stored). */
  noCache?: boolean;
  /**
   * Return the fresh verdict's cache entry in `cacheEntry` instead of writing it here: the runner saves
   * it in the same transaction as the cell's result (one write per cell instead of two).
   */
  deferCacheWrite?: boolean;
  /**
   * The caller's own bound on calls in flight (a run's batch_size), taken before each attempt's provider
   * call and given back as soon as the provider has answered, so the caller's next call is sent before
   * this one's reply is checked and saved. Rejecting it ends the judging without a call.
   */
  gate?: CallGate;
  /**
   * Told when this judging starts (true) and ends (false) a wait before a retry (backoff or
   * Retry-After), during which it holds no call slot: the runner lets another cell be prepared meanwhile.
   */
  onBackoff?: (waiting: boolean) => void;
  /**
   * Told of each provider reply's tokens as it lands, before its call slot (`gate`) is given back: a
   * budget counts the reply before the caller's next call can check it. The outcome's tokens stay the
   * whole count (they add a hedge's abandoned request, which no reply tells of).
   */
  onReply?: (inputTokens: number, outputTokens: number) => void;
};

/**
 * Waits for the caller's room for one provider call; resolves with the function that gives it back.
 * `priority`: a retry whose wait is over, or a hedge — it goes ahead of calls not yet tried.
 */
export type CallGate = (signal: AbortSignal | undefined, opts?: { priority?: boolean }) => Promise<() => void>;

export type JudgeOutcome = {
  status: "completed" | "failed";
  result: Record<string, unknown> | null;
  score: number | null;
  error: string | null;
  /** The judge's reply when it could not be used, kept for the user to read. */
  rawOutput: string | null;
  model: string;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  cached: boolean;
  attempts: number;
  /** How many of the attempts the provider answered with 429. */
  rateLimited?: number;
  /** Hedged second requests sent (for calls slower than the provider's observed p95). */
  hedges?: number;
  /** With `deferCacheWrite`: the verdict the caller must store in the judge cache. */
  cacheEntry?: JudgeCacheEntry;
};

export type JudgeDeps = {
  /** The AI SDK model for a name; tests may swap it, production uses the OpenAI-compatible provider. */
  languageModel?: (model: string, config: JudgeConfig) => LanguageModelV3;
  retry?: RetryDeps;
  now?: () => number;
  /** The clock of the learnt time limits and hedges (tests drive it by hand). */
  clock?: Clock;
};

/** Chat-completions model of the configured OpenAI-compatible provider (vLLM, Ollama, … all speak it). */
export function defaultLanguageModel(model: string, config: JudgeConfig): LanguageModelV3 {
  return openAIChatModel(config.baseURL, config.apiKey, model);
}

/**
 * The judge client for other structured calls (import feedback): the same provider, configuration
 * and chat-completions model as every verdict; undefined when no provider is configured.
 */
export function judgeLanguageModel(model?: string | null): { model: LanguageModel; name: string } | undefined {
  const config = getJudgeConfig();
  if (!config.configured) return undefined;
  const name = model?.trim() || config.defaultModel;
  return { model: defaultLanguageModel(name, config), name };
}

/** The cache key: everything that decides the answer. */
export function judgeCacheKey(req: Pick<JudgeRequest, "model" | "system" | "prompt" | "outputType">, schema: JsonSchema): string {
  const material = JSON.stringify({ v: 1, model: req.model, system: req.system ?? "", prompt: req.prompt, type: req.outputType, schema, temperature: 0 });
  return createHash("sha256").update(material).digest("hex");
}

function describeFailure(error: unknown, attempts: number, timeoutMs: number, ceilingMs: number): string {
  const info = classifyError(error);
  const tries = attempts > 1 ? ` after ${attempts} attempts` : "";
  const detail = (error as Error)?.message?.slice(0, 300) ?? String(error);
  switch (info.kind) {
    case "rate_limit":
      return `judge rate limited (429)${tries}`;
    case "server":
      return `judge server error (${info.status})${tries}: ${detail}`;
    case "timeout":
      return timeoutMs >= ceilingMs
        ? `judge call timed out after ${timeoutMs} ms${tries}: no reply from the provider (JUDGE_TIMEOUT_MS sets the limit)`
        : `judge call timed out after ${timeoutMs} ms${tries}: no reply from the provider (a limit learnt from its latency: JUDGE_TIMEOUT_P99_MULTIPLE × p99, at least JUDGE_TIMEOUT_FLOOR_MS)`;
    case "network":
      return `judge unreachable${tries}: ${detail}`;
    case "client":
      return `judge rejected the request (${info.status}): ${detail}`;
    default:
      return `judge call failed: ${detail}`;
  }
}

/** Characters a token is taken to hold when sizing a prompt (as lib/metrics/evidence.ts's CHARS_PER_TOKEN). */
const PROMPT_CHARS_PER_TOKEN = 3;

/**
 * Why the prompt is not sent (longer than the model's context window, JUDGE_CONTEXT_TOKENS or its entry in
 * JUDGE_CONTEXT_TOKENS_BY_MODEL, at 3 characters a token), or null. No call is made for such a prompt:
 * the provider would refuse it or bill a context's worth of tokens on every attempt.
 */
export function promptPastContext(req: Pick<JudgeRequest, "model" | "system" | "prompt">): string | null {
  const contextTokens = contextTokensFor(req.model);
  const limit = contextTokens * PROMPT_CHARS_PER_TOKEN;
  const size = (req.system?.length ?? 0) + req.prompt.length;
  if (size <= limit) return null;
  const n = (v: number) => v.toLocaleString("en-US");
  return (
    `prompt too long for the judge: ${n(size)} characters, more than the context of '${req.model}', ${n(contextTokens)} tokens ` +
    `(about ${n(limit)} characters; JUDGE_CONTEXT_TOKENS, or JUDGE_CONTEXT_TOKENS_BY_MODEL for this model) once the conversation evidence is cut: ` +
    `the text judged is never cut, so it alone is too long; no call was made`
  );
}

/** Judge one prompt; never throws except when `req.signal` is aborted. */
export async function judge(req: JudgeRequest, deps: JudgeDeps = {}): Promise<JudgeOutcome> {
  const now = deps.now ?? Date.now;
  const started = now();
  const base = { model: req.model, inputTokens: 0, outputTokens: 0, cached: false, attempts: 0 };
  const fail = (error: string, rawOutput: string | null = null, extra: Partial<JudgeOutcome> = {}): JudgeOutcome => ({
    ...base,
    status: "failed",
    result: null,
    score: null,
    error,
    rawOutput,
    latencyMs: now() - started,
    ...extra,
  });

  const config = getJudgeConfig();
  if (!config.configured && !deps.languageModel) return fail(notConfiguredMessage);
  // Conversation evidence was cut to fit the context already (lib/metrics/evidence.ts); what is still too
  // long is the text judged itself, which is never cut: a 20 MB message went whole to the provider, four times.
  const tooLong = promptPastContext(req);
  if (tooLong) return fail(tooLong);

  const schema = verdictSchema(req.outputType, req.outputSchema);
  const key = judgeCacheKey(req, schema);
  if (!req.noCache) {
    const hit = await readJudgeCache(key);
    if (hit) {
      const check = checkVerdict(req.outputType, req.outputSchema, hit.response);
      if (check.ok) {
        return { ...base, status: "completed", ...check.verdict, error: null, rawOutput: null, cached: true, latencyMs: now() - started };
      }
    }
  }

  // The configured provider's calls go to the judge thread (lib/judge/call-thread.ts); a model a
  // caller passes in (tests, benches) is called here.
  const model = deps.languageModel ? deps.languageModel(req.model, config) : config.callsOnThread ? undefined : defaultLanguageModel(req.model, config);
  const callProvider = (turns: Turn[], signal: AbortSignal): Promise<CallResult> =>
    model
      ? callModel(model, turns, req.system, schema, config.timeoutMs, signal)
      : callOnThread({ baseURL: config.baseURL, apiKey: config.apiKey, model: req.model, turns, system: req.system, schema, timeoutMs: config.timeoutMs }, signal);
  const limiter = limiterFor(req.model, config.maxConcurrency);
  const tracker = trackerFor(req.model);
  const tail: TailSettings = { timeoutMs: config.timeoutMs, timeoutFloorMs: config.timeoutFloorMs, timeoutP99Multiple: config.timeoutP99Multiple, hedge: config.hedge, hedgeFloorMs: HEDGE_FLOOR_MS };
  let attempts = 0;
  let inputTokens = 0;
  let outputTokens = 0;
  let rateLimited = 0;
  let hedges = 0;
  let timeoutMs = config.timeoutMs;
  const retryDeps = deps.retry ?? realRetryDeps;
  const retry: RetryDeps = {
    random: retryDeps.random,
    sleep: async (ms, s) => {
      req.onBackoff?.(true);
      try {
        await retryDeps.sleep(ms, s);
      } finally {
        req.onBackoff?.(false);
      }
    },
  };
  /**
   * One request of an attempt (the first, or its hedge): the caller's room first (holding nothing of
   * the process-wide limiter while it waits), then the limiter's slot, then the provider. A retry whose
   * wait is over and a hedge go first in both queues. Each 429 is told to the limiter with its epoch.
   */
  const request =
    (turns: Turn[], n: number) =>
    async (role: Role, signal: AbortSignal, sent: () => void): Promise<CallResult> => {
      const priority = n > 0 || role === "hedge";
      const leave = req.gate ? await req.gate(signal, { priority }) : undefined;
      try {
        if (role === "primary") attempts++;
        const slot = await limiter.acquire(signal, { priority });
        try {
          if (role === "hedge") hedges++;
          sent();
          const res = await callProvider(turns, signal);
          limiter.onSuccess(slot);
          req.onReply?.(res.inputTokens, res.outputTokens);
          return res;
        } catch (error) {
          const info = classifyError(error);
          if (info.kind === "rate_limit") {
            rateLimited++;
            limiter.onRateLimit(slot.epoch, info.retryAfterMs);
          }
          throw error;
        } finally {
          slot.release();
        }
      } finally {
        leave?.();
      }
    };
  const call = (turns: Turn[]) =>
    withRetries(
      async (n) => {
        try {
          const won = await hedgedCall(request(turns, n), { tracker, settings: tail, signal: req.signal, clock: deps.clock });
          // Only the winner's reply is used. A loser that was sent went to the provider with the same
          // prompt, which bills a request it has begun even once the client left: it is counted at the
          // winner's tokens (its own never arrive), so budgets and totals do not miss it.
          inputTokens += won.value.inputTokens * (1 + won.abandoned);
          outputTokens += won.value.outputTokens * (1 + won.abandoned);
          return won.value;
        } catch (error) {
          if (error instanceof HedgedCallError) {
            if (error.timeoutMs !== undefined) timeoutMs = error.timeoutMs;
            throw error.error;
          }
          throw error;
        }
      },
      { maxRetries: config.maxRetries, maxRateLimitRetries: config.maxRateLimitRetries, signal: req.signal, deps: retry },
    );

  const interpret = (res: CallResult) => {
    const candidate = res.parsed ? { ok: true as const, value: res.value } : extractJson(res.text);
    if (!candidate.ok) return { ok: false as const, reason: "the judge's reply is not valid JSON" };
    return checkVerdict(req.outputType, req.outputSchema, candidate.value);
  };

  const messages: Turn[] = [{ role: "user", content: req.prompt }];
  let first: CallResult;
  try {
    first = await call(messages);
  } catch (error) {
    if (req.signal?.aborted) throw req.signal.reason;
    return fail(describeFailure(error, attempts, timeoutMs, config.timeoutMs), null, { attempts, inputTokens, outputTokens, rateLimited, hedges });
  }
  let check = interpret(first);
  let raw = first.text;
  if (!check.ok) {
    // One repair attempt: show the model its reply and the reason, ask for the JSON alone.
    const repair: Turn[] = [
      ...messages,
      { role: "assistant", content: first.text || "(empty reply)" },
      {
        role: "user",
        content: `That reply could not be used: ${check.reason}. Reply again with only a JSON object that matches this JSON schema, and nothing else:\n${JSON.stringify(schema)}`,
      },
    ];
    try {
      const second = await call(repair);
      const secondCheck = interpret(second);
      if (secondCheck.ok) check = secondCheck;
      else raw = second.text || raw;
    } catch {
      if (req.signal?.aborted) throw req.signal.reason;
      // The first reply is what the user should see; the repair failure is secondary.
    }
  }
  if (!check.ok) {
    return fail(`invalid judge output: ${check.reason}`, raw || null, { attempts, inputTokens, outputTokens, rateLimited, hedges });
  }
  const cacheEntry: JudgeCacheEntry = { key, model: req.model, response: check.verdict.result, inputTokens, outputTokens };
  if (!req.deferCacheWrite) await writeJudgeCache(cacheEntry);
  return {
    ...(req.deferCacheWrite ? { cacheEntry } : {}),
    ...base,
    status: "completed",
    ...check.verdict,
    error: null,
    rawOutput: null,
    attempts,
    inputTokens,
    outputTokens,
    rateLimited,
    hedges,
    latencyMs: now() - started,
  };
}
