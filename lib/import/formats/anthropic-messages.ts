/**
 * Anthropic Messages: `{system?, messages: [{role, content}], tools?}` where `content` is a string or
 * a list of blocks — `text`, `thinking` (→ thinking step), `tool_use` `{id, name, input}` (→ tool_call
 * step), `tool_result` `{tool_use_id, content}` sent in a user message (→ tool_result step of the
 * assistant turn it answers), `image` (kept as a placeholder). `system` becomes the first message.
 */
import { isRecord } from "../issues";

function anthropicBlock(block: unknown): boolean {
  if (!isRecord(block)) return false;
  return (
    (block.type === "tool_use" && "input" in block) ||
    (block.type === "tool_result" && typeof block.tool_use_id === "string") ||
    (block.type === "thinking" && typeof block.thinking === "string") ||
    block.type === "redacted_thinking" ||
    (block.type === "image" && isRecord(block.source))
  );
}

/** True when some message uses a content block only the Messages API has, or the record has a top-level system with blocks. */
export function isAnthropicMessages(messages: unknown[], record?: Record<string, unknown>): boolean {
  const blocks = messages.flatMap((m) => (isRecord(m) && Array.isArray(m.content) ? m.content : []));
  if (blocks.some(anthropicBlock)) return true;
  return record !== undefined && "system" in record && blocks.length > 0 && blocks.every((b) => isRecord(b) && typeof b.type === "string");
}
