/**
 * Messages whose content is a list of parts under other names than OpenAI's: the text in `value` or
 * `content` instead of `text`, and part types `reasoning`/`thinking` (→ thinking steps),
 * `tool_call`/`tool_use` (→ tool_call steps) and `tool_result` (→ tool_result steps). Many training
 * sets and agent logs look like this; reading `value` is what keeps their text from being dropped.
 */
import { isRecord } from "../issues";

const stepTypes = new Set(["reasoning", "tool_call", "function_call_output", "tool_output"]);

function foreignPart(part: unknown): boolean {
  if (!isRecord(part)) return false;
  if (typeof part.text !== "string" && (typeof part.value === "string" || typeof part.content === "string")) return true;
  return typeof part.type === "string" && stepTypes.has(part.type);
}

/** True when some message's content parts name their text or steps in a way OpenAI and Anthropic do not. */
export function isContentParts(messages: unknown[]): boolean {
  return messages.some((m) => isRecord(m) && Array.isArray(m.content) && m.content.some(foreignPart));
}
