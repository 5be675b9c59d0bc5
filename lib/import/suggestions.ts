/**
 * The catalogue of known mistakes: field names other tools use for ours, role names other tools use,
 * and the wording of each suggestion. Validation and the rules-based feedback both read from here,
 * so the advice in an error and the suggested transformation never disagree.
 */
import { messageRoles } from "@/lib/vocabulary";
import { clip } from "./issues";

export const allowedRolesText = messageRoles.join(", ");

/** Role values other exports use, and the role they mean. */
export const roleAliases: Record<string, (typeof messageRoles)[number]> = {
  bot: "assistant",
  ai: "assistant",
  model: "assistant",
  agent: "assistant",
  chatbot: "assistant",
  gpt: "assistant",
  human: "user",
  customer: "user",
  client: "user",
  person: "user",
  developer: "system",
  function: "tool",
};

/** The role a known alias stands for; own keys only, so `constructor` or `__proto__` map to nothing. */
export function roleAlias(value: string): (typeof messageRoles)[number] | undefined {
  const key = value.trim().toLowerCase();
  return Object.prototype.hasOwnProperty.call(roleAliases, key) ? roleAliases[key] : undefined;
}

/** Field names other exports use, per level, and the field they mean. */
export const fieldAliases = {
  root: { conversations: ["dialogs", "dialogues", "conversation", "chats", "sessions", "threads", "data", "items", "records", "samples"] },
  conversation: { messages: ["turns", "dialog", "dialogue", "utterances", "history", "chat", "transcript", "conversation", "messages_list"] },
  message: {
    role: ["speaker", "author", "from", "sender", "role_name", "participant", "type"],
    content: ["text", "message", "body", "value", "utterance", "response"],
    steps: ["trace", "spans", "actions", "tool_steps"],
  },
  step: {
    output_content: ["content", "output", "text", "response"],
    tool_call: ["function_call", "action", "tool_use"],
    tool_result: ["observation", "result", "tool_output", "function_result"],
    thinking: ["reasoning", "thought", "thoughts"],
  },
} as const;

/** The first key of `obj` that is a known alias of `field`, if any. */
export function findAlias(obj: Record<string, unknown>, aliases: readonly string[]): string | undefined {
  return aliases.find((a) => Object.prototype.hasOwnProperty.call(obj, a));
}

/** Suggestion for a role value that is not allowed. */
export function roleSuggestion(value: unknown): string {
  if (typeof value === "string") {
    const lower = value.trim().toLowerCase();
    if ((messageRoles as readonly string[]).includes(lower)) return `Use '${lower}' (roles are lower case)`;
    const alias = roleAlias(lower);
    if (alias) return `Use '${alias}' instead of '${clip(value)}'`;
  }
  return `Use one of: ${allowedRolesText}`;
}

export function missingRoleSuggestion(renamedFrom?: string): string {
  return renamedFrom
    ? `Rename '${renamedFrom}' to 'role'; allowed roles: ${allowedRolesText}`
    : `Add 'role' with one of: ${allowedRolesText}`;
}

export function renameSuggestion(from: string, to: string, fallback: string): string {
  return from ? `Rename '${from}' to '${to}'` : fallback;
}

/** `Expected string, got number` style suggestions name the expected type. */
export function typeSuggestion(field: string, expected: string, example?: string): string {
  return `'${field}' must be ${expected}${example ? `, e.g. ${example}` : ""}`;
}

export const emptyStepSuggestion =
  "Give the step at least one of thinking, tool_call, tool_result, output_content, or remove it";
