/**
 * Codex CLI session rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`): one
 * `{timestamp, type, payload}` per line, `type` one of `session_meta`, `turn_context`, `response_item`,
 * `event_msg`, `compacted`. The conversation is in the `response_item`s (messages, `reasoning` with a
 * readable `summary`, `function_call` with arguments as JSON text, `custom_tool_call` with its `input`,
 * `local_shell_call`, and `*_output` items whose output is JSON text again). Codex writes every prompt,
 * answer and reasoning summary twice, as an item and as an `event_msg`: the event copy is skipped and
 * counted unless no item holds its text. Context Codex wraps around the prompt (`<environment_context>`,
 * `<user_instructions>`, AGENTS.md, the IDE's "# Context from my IDE setup") is not a prompt: a message
 * of only context is a system message marked `context`, and the prompt under "## My request for Codex:"
 * is the user message with the IDE context (and the message as written) in its meta.
 */
import { isRecord } from "../issues";
import type { Normalised } from "./normalised";
import { responsesToolItem } from "./sdk-messages";
import type { ConversationSource } from "./source-paths";
import { partsText } from "./text-parts";
import { convertMessages } from "./turns";

type Rec = Record<string, unknown>;
type Line = { line: number; value: unknown };

const lineTypes = new Set(["session_meta", "turn_context", "response_item", "event_msg", "compacted"]);

/** True when the first lines are rollout lines (a few keys checked, never the whole file). */
export function isCodexRollout(lines: Line[]): boolean {
  const head = lines.slice(0, 3);
  return (
    head.length > 0 &&
    head.every(({ value }) => isRecord(value) && typeof value.type === "string" && lineTypes.has(value.type) && isRecord(value.payload)) &&
    head.some(({ value }) => isRecord(value) && (value.type === "session_meta" || value.type === "response_item"))
  );
}

const contextOpeners = ["<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>", "<user_shell_command>"];
const ideRequest = "## My request for Codex:";

/** Convert one rollout (its sessions by `session_meta` id; one in practice) to conversations. */
export function convertCodexRollout(lines: Line[]): Normalised {
  const skipped: Record<string, number> = {};
  const skip = (kind: string) => {
    skipped[kind] = (skipped[kind] ?? 0) + 1;
  };
  const meta: Rec = {};
  const models = new Set<string>();
  const messages: Rec[] = [];
  // Texts the response items hold: an event_msg repeating one of them is the second copy.
  const itemTexts: string[] = [];
  const pendingEvents: Array<{ at: number; role: string; text: string; thinking?: boolean }> = [];
  let usage: unknown;
  for (const { value } of lines) {
    const rec = value as Rec;
    const payload = rec.payload as Rec;
    if (rec.type === "session_meta") {
      for (const [k, v] of Object.entries(payload)) {
        const key = k === "id" ? "session_id" : k;
        if (meta[key] === undefined) meta[key] = v;
      }
      continue;
    }
    if (rec.type === "turn_context") {
      if (typeof payload.model === "string") models.add(payload.model);
      meta.turn_context = payload;
      skip("turn_context");
      continue;
    }
    if (rec.type === "compacted") {
      messages.push({ role: "user", content: typeof payload.message === "string" ? payload.message : JSON.stringify(payload), meta: { compaction_summary: true } });
      continue;
    }
    if (rec.type === "event_msg") {
      const kind = typeof payload.type === "string" ? payload.type : "unknown";
      if (kind === "token_count" && payload.info !== undefined && payload.info !== null) usage = payload.info;
      const text = kind === "user_message" || kind === "agent_message" ? payload.message : kind === "agent_reasoning" ? payload.text : undefined;
      if (typeof text === "string" && text) {
        pendingEvents.push({ at: messages.length, role: kind === "user_message" ? "user" : "assistant", text, thinking: kind === "agent_reasoning" });
      }
      skip(`event_msg/${kind}`);
      continue;
    }
    const type = payload.type;
    if (type === "message") {
      const text = partsText(payload.content);
      itemTexts.push(text);
      const role = payload.role === "developer" ? "system" : String(payload.role);
      if (role === "user" && contextOpeners.some((o) => text.trimStart().startsWith(o))) {
        messages.push({ role: "system", content: text, meta: { context: true } });
      } else if (role === "user" && text.includes(ideRequest)) {
        const at = text.lastIndexOf(ideRequest);
        messages.push({ role: "user", content: text.slice(at + ideRequest.length).trim(), meta: { ide_context: text.slice(0, at).trimEnd(), as_written: text } });
      } else messages.push({ role, content: text });
    } else if (type === "reasoning") {
      const text = partsText(payload.summary) || partsText(payload.content);
      itemTexts.push(text);
      if (text) messages.push({ role: "assistant", content: null, reasoning: text });
      else skip("response_item/reasoning (encrypted only)");
    } else {
      // Tool calls and their outputs are Responses API items (an output is often JSON text, `{"output": …,
      // "metadata": {exit_code, duration_seconds}}`: stored parsed), read as an SDK's Responses items are.
      const tool = responsesToolItem(payload);
      if (tool) messages.push(...tool);
      else skip(`response_item/${String(type)}`);
    }
  }
  // Event copies whose text no item holds (older rollouts wrote some only as events) are kept where they were.
  const joinedItems = itemTexts.join("\u0000");
  const kept = pendingEvents.filter((e) => !joinedItems.includes(e.text));
  for (const e of kept.reverse()) {
    messages.splice(e.at, 0, e.thinking ? { role: "assistant", content: null, reasoning: e.text } : { role: e.role, content: e.text });
    const kind = e.role === "user" ? "event_msg/user_message" : e.thinking ? "event_msg/agent_reasoning" : "event_msg/agent_message";
    skipped[kind] -= 1;
    if (!skipped[kind]) delete skipped[kind];
  }
  if (models.size) meta.models = [...models];
  if (usage !== undefined) meta.usage = usage;
  const converted = convertMessages(messages);
  const name = typeof meta.session_id === "string" ? `Codex session ${meta.session_id}` : undefined;
  const sources: ConversationSource[] = [{ path: "", messagesPath: "", rawMessages: lines.map((l) => (isRecord(l.value) ? l.value.payload : l.value)), wholeConversation: true }];
  return {
    format: "codex_rollout",
    data: { conversations: [{ name, meta, messages: converted.messages }] },
    sources,
    structural: ["type", "call_id", "status", "encrypted_content", "timestamp", "kind"],
    records: {
      inFile: lines.length,
      unit: "lines",
      skipped,
      reasons: [
        "Codex writes each prompt, answer and reasoning summary twice (a response item and an event): each is stored once",
        "context Codex adds around the prompt (environment, instructions) is a system message marked context",
      ],
    },
  };
}
