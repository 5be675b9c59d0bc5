/**
 * ShareGPT / LLaMA-Factory: `{conversations: [{from, value}], system?, tools?}` with `from` one of
 * `human|user`, `gpt|assistant`, `system`, `function_call` (the value is the call as JSON text),
 * `observation|tool` (the tool's output). `tools` is the declared tools as a JSON string. The record's
 * other fields become the conversation's meta (records.ts); the turn reader (turns.ts) converts.
 */
import { isRecord } from "../issues";

/** True when the messages are ShareGPT turns: `from` and `value` instead of `role` and `content`. */
export function isShareGptMessages(messages: unknown[]): boolean {
  let seen = false;
  for (const m of messages) {
    if (!isRecord(m)) return false;
    if (typeof m.role === "string") return false;
    if (typeof m.from === "string" && "value" in m) seen = true;
  }
  return seen;
}
