/**
 * OpenAI chat completions: message lists whose `content` is a string or an array of parts
 * (`{type: "text", text}`, image/audio parts kept as a placeholder, `refusal` parts), assistant
 * `tool_calls`, the legacy `function_call` and `role: "function"`, `role: "tool"` replies, and request
 * bodies (`{model, messages, tools}`: the tools become the conversation's agent). Conversion is the
 * shared turn reader (turns.ts): `tool_calls` → `tool_call` steps, tool replies → `tool_result` steps.
 */
import { isRecord } from "../issues";

/** True when some message uses a field only the OpenAI format has. */
export function hasOpenAiMarkers(messages: unknown[]): boolean {
  return messages.some(
    (m) =>
      isRecord(m) &&
      (Array.isArray(m.tool_calls) ||
        isRecord(m.function_call) ||
        typeof m.tool_call_id === "string" ||
        typeof m.reasoning_content === "string" ||
        m.role === "developer" ||
        m.role === "function" ||
        (Array.isArray(m.content) && m.content.every((p) => isRecord(p) && typeof p.type === "string"))),
  );
}

/** A request body rather than a stored conversation: the fields the chat-completions endpoint takes. */
export function isRequestBody(record: Record<string, unknown>): boolean {
  return typeof record.model === "string" || Array.isArray(record.tools);
}

/** A chat-completions message: an object with a string role and no `messages` of its own. */
export function isChatMessage(value: unknown): boolean {
  return isRecord(value) && typeof value.role === "string" && !("messages" in value);
}
