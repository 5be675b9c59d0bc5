/**
 * Stages 3 and 4 of an import, on the Turnscope shape: structure (`conversations`, each `messages`,
 * each `role`), then field types and values. A stage with errors stops the next one; within a stage
 * every error is reported (up to the cap). What passes comes out typed, ready to insert.
 */
import type { Conversation, Message, Step } from "@/lib/conversation";
import { messageRoles, type MessageRole } from "@/lib/vocabulary";
import type { ImportIssue } from "@/lib/schemas/imports";
import { clip, IssueList, isRecord, joinPath, jsonTypeOf, preview } from "./issues";
import {
  allowedRolesText,
  emptyStepSuggestion,
  fieldAliases,
  findAlias,
  missingRoleSuggestion,
  roleSuggestion,
  typeSuggestion,
} from "./suggestions";
import { checkToolCall, collectDeclaredTools, type DeclaredTools } from "./tool-calls";

/** What passes validation is the one conversation shape (lib/conversation.ts), which the store writes as is. */
export type ImportStep = Step;
export type ImportMessage = Message;
export type ImportConversation = Conversation;
export type ImportCounts = { conversations: number; messages: number; steps: number };

export type ValidationResult =
  | { ok: true; conversations: ImportConversation[]; counts: ImportCounts; warnings: ImportIssue[] }
  | { ok: false; status: 422; errors: ImportIssue[]; warnings: ImportIssue[] };

const has = (obj: Record<string, unknown>, key: string) => Object.prototype.hasOwnProperty.call(obj, key);
const roles: readonly string[] = messageRoles;

class Reporter {
  readonly errors = new IssueList();
  readonly warnings = new IssueList();

  error(issue: ImportIssue) {
    this.errors.add(issue);
  }
  warn(issue: ImportIssue) {
    this.warnings.add(issue);
  }
  typeError(path: string, field: string, value: unknown, expected: string, example?: string) {
    this.error({
      path,
      message: `Invalid type for '${field}': expected ${expected}, got ${jsonTypeOf(value)}`,
      suggestion: typeSuggestion(field, expected, example),
    });
  }
}

function missingField(field: string, path: string, obj: Record<string, unknown>, aliases: readonly string[], fallback: string): ImportIssue {
  const alias = findAlias(obj, aliases);
  return {
    path: joinPath(path, field),
    message: `Missing required field '${field}'`,
    suggestion: alias ? `Rename '${alias}' to '${field}'` : fallback,
  };
}

/** Stage 3: the skeleton every later check relies on. */
function checkStructure(data: unknown, r: Reporter): unknown[] | undefined {
  if (!isRecord(data)) {
    r.error({
      path: "(root)",
      message: "Missing required field 'conversations'",
      suggestion: Array.isArray(data)
        ? 'The top level is an array: wrap it as {"conversations": [...]}'
        : 'The file must be a JSON object with a "conversations" array',
    });
    return undefined;
  }
  if (!has(data, "conversations")) {
    r.error(missingField("conversations", "", data, fieldAliases.root.conversations, 'Add a top-level "conversations" array'));
    return undefined;
  }
  const conversations = data.conversations;
  if (!Array.isArray(conversations)) {
    r.typeError("conversations", "conversations", conversations, "an array", '[{"messages": [...]}]');
    return undefined;
  }
  if (conversations.length === 0) {
    r.error({ path: "conversations", message: "No conversations to import: 'conversations' is empty", suggestion: "Add at least one conversation" });
    return undefined;
  }
  conversations.forEach((conv, i) => {
    const path = `conversations[${i}]`;
    if (!isRecord(conv)) return r.typeError(path, "conversation", conv, "an object", '{"messages": [...]}');
    if (!has(conv, "messages")) {
      const issue = missingField("messages", path, conv, fieldAliases.conversation.messages, 'Add a "messages" array to the conversation');
      const alias = findAlias(conv, fieldAliases.conversation.messages);
      const list = alias ? conv[alias] : undefined;
      // A rename is suggested only when it would work: the field holds messages with a role.
      if (alias && !(Array.isArray(list) && list.every((m) => isRecord(m) && typeof m.role === "string"))) {
        issue.suggestion = `'${alias}' does not hold messages with a role (renaming it would not import): if another file holds the replies, send both files with 'join_key'; otherwise send a mapping naming the role and content fields`;
      }
      return r.error(issue);
    }
    if (!Array.isArray(conv.messages)) return r.typeError(joinPath(path, "messages"), "messages", conv.messages, "an array");
    conv.messages.forEach((msg, j) => {
      const mPath = `${path}.messages[${j}]`;
      if (!isRecord(msg)) return r.typeError(mPath, "message", msg, "an object", '{"role": "user", "content": "..."}');
      if (!has(msg, "role") || msg.role === null) {
        const alias = findAlias(msg, fieldAliases.message.role);
        r.error({ path: joinPath(mPath, "role"), message: "Missing required field 'role'", suggestion: missingRoleSuggestion(alias) });
      }
    });
  });
  return r.errors.count ? undefined : conversations;
}

const optionalText = (obj: Record<string, unknown>, field: string, path: string, r: Reporter): string | null => {
  const value = obj[field];
  if (value === undefined || value === null || !has(obj, field)) return null;
  if (typeof value === "string") return value;
  r.typeError(joinPath(path, field), field, value, "a string");
  return null;
};

const optionalObject = (obj: Record<string, unknown>, field: string, path: string, r: Reporter): unknown => {
  if (!has(obj, field) || obj[field] === null) return null;
  const value = obj[field];
  if (isRecord(value)) return value;
  r.typeError(joinPath(path, field), field, value, "an object", '{"channel": "web"}');
  return null;
};

function checkAgents(conv: Record<string, unknown>, path: string, r: Reporter): unknown {
  if (!has(conv, "agents") || conv.agents === null) return null;
  const agents = conv.agents;
  if (!Array.isArray(agents)) {
    r.typeError(joinPath(path, "agents"), "agents", agents, "an array", '[{"name": "support", "tools": {...}}]');
    return null;
  }
  agents.forEach((agent, a) => {
    const aPath = `${path}.agents[${a}]`;
    if (!isRecord(agent)) return r.typeError(aPath, "agent", agent, "an object", '{"name": "support", "tools": {...}}');
    if (has(agent, "name") && agent.name !== null && typeof agent.name !== "string") r.typeError(joinPath(aPath, "name"), "name", agent.name, "a string");
    const tools = agent.tools;
    if (has(agent, "tools") && tools !== null && !isRecord(tools) && !Array.isArray(tools)) {
      r.typeError(joinPath(aPath, "tools"), "tools", tools, "an object (tool name → definition) or an array");
    }
  });
  return agents;
}

/** A field of a tool call that holds JSON text (a call sent as text), and whether it parses. */
function jsonTextField(call: Record<string, unknown>): { key: string; parsed: boolean; problem?: string } | undefined {
  for (const [key, value] of Object.entries(call)) {
    if (typeof value !== "string" || !/^\s*[{[]/.test(value)) continue;
    try {
      JSON.parse(value);
      return { key, parsed: true };
    } catch (error) {
      return { key, parsed: false, problem: (error as Error).message };
    }
  }
  return undefined;
}

function checkStep(step: unknown, path: string, declared: DeclaredTools, r: Reporter): ImportStep | undefined {
  if (!isRecord(step)) {
    r.typeError(path, "step", step, "an object", '{"thinking": "..."}');
    return undefined;
  }
  const present = (f: string) => has(step, f) && step[f] !== null;
  if (!present("thinking") && !present("tool_call") && !present("tool_result") && !present("output_content")) {
    const aliases = fieldAliases.step;
    const rename = (Object.keys(aliases) as Array<keyof typeof aliases>)
      .map((field) => [field, findAlias(step, aliases[field])] as const)
      .find(([, alias]) => alias);
    r.error({
      path,
      message: "Step has none of thinking, tool_call, tool_result, output_content",
      suggestion: rename ? `Rename '${rename[1]}' to '${rename[0]}'` : emptyStepSuggestion,
    });
  }
  const toolCall = present("tool_call") ? step.tool_call : null;
  if (toolCall !== null) {
    const tPath = joinPath(path, "tool_call");
    const example = '{"name": "search", "arguments": {"q": "..."}}';
    if (!isRecord(toolCall)) r.typeError(tPath, "tool_call", toolCall, "an object", example);
    else if (!has(toolCall, "name")) {
      const text = jsonTextField(toolCall);
      r.error(
        text
          ? {
              path: joinPath(tPath, text.key),
              message: `Missing required field 'name': the call is JSON text in '${text.key}' ${text.parsed ? "without a 'name'" : `that does not parse (${text.problem})`}`,
              suggestion: `Make '${text.key}' JSON text of ${example} (it is parsed on import), or put the call's 'name' and 'arguments' in the part itself`,
            }
          : { path: joinPath(tPath, "name"), message: "Missing required field 'name'", suggestion: `A tool call looks like ${example}` },
      );
    }
    else if (typeof toolCall.name !== "string" || !toolCall.name) r.typeError(joinPath(tPath, "name"), "name", toolCall.name, "a non-empty string");
    else {
      const args = has(toolCall, "arguments") ? toolCall.arguments : undefined;
      if (args !== undefined && args !== null && !isRecord(args)) {
        r.typeError(joinPath(tPath, "arguments"), "arguments", args, "an object", typeof args === "string" ? "the parsed JSON, not a string" : '{"q": "..."}');
      } else {
        checkToolCall({ name: toolCall.name, arguments: args }, declared, tPath, (w) => r.warn(w));
      }
    }
  }
  return {
    thinking: optionalText(step, "thinking", path, r),
    toolCall,
    toolResult: present("tool_result") ? step.tool_result : null,
    outputContent: optionalText(step, "output_content", path, r),
    outputStructured: present("output_structured") ? step.output_structured : null,
    modelName: optionalText(step, "model_name", path, r),
    agentName: optionalText(step, "agent_name", path, r),
  };
}

function checkMessage(msg: Record<string, unknown>, path: string, declared: DeclaredTools, r: Reporter): ImportMessage {
  const role = msg.role;
  if (typeof role !== "string" || !roles.includes(role)) {
    const shown = typeof role === "string" ? `'${clip(role)}'` : `${preview(role)} (a ${jsonTypeOf(role)}, expected one of ${allowedRolesText})`;
    r.error({ path: joinPath(path, "role"), message: `Invalid role value: ${shown}`, suggestion: roleSuggestion(role) });
  }
  let content: string | null = null;
  const rawContent = has(msg, "content") ? msg.content : undefined;
  if (typeof rawContent === "string") content = rawContent;
  else if (rawContent !== undefined && rawContent !== null) {
    r.typeError(joinPath(path, "content"), "content", rawContent, "a string", Array.isArray(rawContent) ? "the text parts joined into one string" : undefined);
  }
  const noContent = rawContent === undefined || rawContent === null || (typeof rawContent === "string" && rawContent.trim() === "");
  const meta = optionalObject(msg, "meta", path, r);
  const steps: ImportStep[] = [];
  if (has(msg, "steps") && msg.steps !== null) {
    if (!Array.isArray(msg.steps)) r.typeError(joinPath(path, "steps"), "steps", msg.steps, "an array");
    else {
      msg.steps.forEach((s, k) => {
        const step = checkStep(s, `${path}.steps[${k}]`, declared, r);
        if (step) steps.push(step);
      });
    }
  }
  // A turn that only calls tools (OpenAI's content: null beside tool_calls) has nothing missing: its steps
  // are what it did (issue 51: it warned "Message has no content — Add 'content'").
  const acted = steps.some((s) => s.toolCall !== null || s.toolResult !== null || s.outputContent !== null || s.outputStructured !== null);
  if (noContent && !acted) {
    const alias = findAlias(msg, fieldAliases.message.content);
    r.warn({
      path,
      message: "Message has no content",
      suggestion: alias
        ? `Rename '${alias}' to 'content'`
        : "Add 'content' with the message text; without it message-level metrics have nothing to judge",
    });
  }
  return { role: role as MessageRole, content, meta, steps };
}

/** Stage 4: types and values of everything under the skeleton. */
function checkValues(conversations: unknown[], r: Reporter): ImportConversation[] {
  return conversations.map((raw, i) => {
    const conv = raw as Record<string, unknown>;
    const path = `conversations[${i}]`;
    const agents = checkAgents(conv, path, r);
    const declared = collectDeclaredTools(agents);
    const messages = (conv.messages as Array<Record<string, unknown>>).map((m, j) => checkMessage(m, `${path}.messages[${j}]`, declared, r));
    if (messages.length === 0) {
      r.warn({ path: joinPath(path, "messages"), message: "Conversation has no messages", suggestion: "Remove it, or add its messages" });
    }
    return {
      name: optionalText(conv, "name", path, r),
      description: optionalText(conv, "description", path, r),
      meta: optionalObject(conv, "meta", path, r),
      agents,
      messages,
    };
  });
}

/** Validate the Turnscope shape. Paths are in that shape; formats/source-paths maps them into the file. */
export function validateConversations(data: unknown): ValidationResult {
  const r = new Reporter();
  const skeleton = checkStructure(data, r);
  const conversations = skeleton ? checkValues(skeleton, r) : [];
  if (r.errors.count) return { ok: false, status: 422, errors: r.errors.toArray("errors"), warnings: r.warnings.toArray("warnings") };
  const counts = { conversations: conversations.length, messages: 0, steps: 0 };
  for (const c of conversations) {
    counts.messages += c.messages.length;
    for (const m of c.messages) counts.steps += m.steps.length;
  }
  return { ok: true, conversations, counts, warnings: r.warnings.toArray("warnings") };
}
