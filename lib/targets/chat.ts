/**
 * One Chat Completions call straight to the provider model's `doGenerate` (an openai_chat target, and the
 * simulated user): generateText re-validates the prompt against zod schemas and wraps telemetry on every
 * call, which the judge measured at twice the client CPU of doGenerate (lib/judge/call.ts). At 32
 * conversations × 2 calls in flight that CPU is the server's event loop, and every turn waits on it.
 * Providers are made once per address and key; the time limit is one timer per call, undone when it ends.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { APICallError, type JSONSchema7, type LanguageModelV3, type LanguageModelV3FunctionTool, type LanguageModelV3Prompt } from "@ai-sdk/provider";

export class ChatTimeoutError extends Error {
  override name = "TimeoutError";
}

export type ChatTurn = { role: "system" | "user" | "assistant"; content: string };
export type ChatTool = { name: string; description?: string; parameters: Record<string, unknown> };
export type ChatReply = { text: string; toolCalls: Array<{ id: string; name: string; input: unknown }>; inputTokens: number; outputTokens: number };

const providers = new Map<string, ReturnType<typeof createOpenAI>>();

/** The chat model at an OpenAI-compatible address, its provider made once per address, key and headers. */
export function chatModel(baseURL: string | undefined, apiKey: string, model: string, headers: Record<string, string> = {}, name = "target", fetch?: typeof globalThis.fetch): LanguageModelV3 {
  const key = JSON.stringify([baseURL, apiKey, headers, name, fetch !== undefined]);
  let provider = providers.get(key);
  if (!provider) {
    provider = createOpenAI({ baseURL, apiKey, headers, name, fetch });
    providers.set(key, provider);
  }
  return provider.chat(model);
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** One chat call; `retries` more tries for an error the provider marks retryable (429, 5xx). */
export async function chatCall(
  model: LanguageModelV3,
  req: { turns: ChatTurn[]; tools?: ChatTool[]; seed?: number; signal: AbortSignal; timeoutMs: number; retries?: number },
): Promise<ChatReply> {
  const system = req.turns.filter((t) => t.role === "system").map((t) => t.content).join("\n\n");
  const prompt: LanguageModelV3Prompt = [
    ...(system ? [{ role: "system" as const, content: system }] : []),
    ...req.turns.filter((t) => t.role !== "system").map((t) => ({ role: t.role as "user" | "assistant", content: [{ type: "text" as const, text: t.content }] })),
  ];
  const tools: LanguageModelV3FunctionTool[] | undefined = req.tools?.length
    ? req.tools.map((t) => ({ type: "function", name: t.name, description: t.description, inputSchema: t.parameters as JSONSchema7 }))
    : undefined;
  for (let attempt = 0; ; attempt++) {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new ChatTimeoutError(`no answer within ${req.timeoutMs} ms`));
    }, req.timeoutMs);
    const onCancel = () => controller.abort(req.signal.reason);
    if (req.signal.aborted) onCancel();
    else req.signal.addEventListener("abort", onCancel, { once: true });
    try {
      const res = await model.doGenerate({ prompt, tools, seed: req.seed, abortSignal: controller.signal });
      let text = "";
      const toolCalls: ChatReply["toolCalls"] = [];
      for (const part of res.content) {
        if (part.type === "text") text += part.text;
        else if (part.type === "tool-call") toolCalls.push({ id: part.toolCallId, name: part.toolName, input: parse(part.input) });
      }
      return { text, toolCalls, inputTokens: res.usage.inputTokens.total ?? 0, outputTokens: res.usage.outputTokens.total ?? 0 };
    } catch (error) {
      if (req.signal.aborted) throw req.signal.reason;
      if (timedOut) throw new ChatTimeoutError(`no answer within ${req.timeoutMs} ms`);
      if (attempt < (req.retries ?? 0) && APICallError.isInstance(error) && error.isRetryable) {
        await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
        continue;
      }
      throw error;
    } finally {
      clearTimeout(timer);
      req.signal.removeEventListener("abort", onCancel);
    }
  }
}
