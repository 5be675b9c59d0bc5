/**
 * Coding-agent session logs (Claude Code's `~/.claude/projects/<project>/<session>.jsonl`): one record
 * per line, `type` one of `user`, `assistant`, `system`, `progress`, `file-history-snapshot`,
 * `queue-operation`, …; conversation records carry `uuid`/`parentUuid` (the thread), `sessionId`,
 * `isSidechain`, and `message`, an Anthropic Messages object (text, thinking, tool_use blocks; tool
 * results as `tool_result` blocks of role `user`). One API reply is streamed over several lines that
 * share `message.id`: they are merged back into one. Records that are not conversation (progress,
 * snapshots, queue operations, hook and timing summaries) are skipped and counted. The compaction
 * summary Claude Code writes after `compact_boundary` is kept, marked in its message meta. Sidechain
 * records (sub-agents) become a conversation of their own, marked `sidechain: true`; so do the messages of a
 * sub-agent that recent versions write inside `progress` records (`data.type` `agent_progress`, one agent
 * by `data.agentId`, its Task call by `parentToolUseID`), marked with its `agent_id` as well.
 */
import { countText } from "../count-text";
import { isRecord } from "../issues";
import type { Normalised } from "./normalised";
import type { ConversationSource } from "./source-paths";
import { convertMessages } from "./turns";

type Rec = Record<string, unknown>;
type Line = { line: number; value: unknown };

const conversationTypes = new Set(["user", "assistant"]);

/** True when the lines are a coding-agent session: typed records, and user/assistant ones with a thread id and an Anthropic message. */
export function isCodingAgentSession(lines: Line[]): boolean {
  let conversational = 0;
  for (const { value } of lines) {
    if (!isRecord(value) || typeof value.type !== "string") return false;
    if (conversationTypes.has(value.type)) {
      if (typeof value.uuid !== "string" || !isRecord(value.message) || typeof value.message.role !== "string") return false;
      conversational++;
    }
  }
  return conversational > 0;
}

/** Record-level fields kept as conversation meta (taken from the session's first record that has them). */
const sessionFields: Array<[string, string]> = [
  ["sessionId", "session_id"],
  ["cwd", "cwd"],
  ["gitBranch", "git_branch"],
  ["version", "agent_version"],
  ["slug", "slug"],
  ["userType", "user_type"],
];

/** Order records so that each follows its parent (file order otherwise): the thread by uuid/parentUuid. */
function threadOrder(records: Array<{ rec: Rec; line: number }>): Array<{ rec: Rec; line: number }> {
  const present = new Set(records.map((r) => r.rec.uuid));
  const done = new Set<unknown>();
  const waiting = new Map<unknown, Array<{ rec: Rec; line: number }>>();
  const out: Array<{ rec: Rec; line: number }> = [];
  const emit = (r: { rec: Rec; line: number }) => {
    out.push(r);
    done.add(r.rec.uuid);
    const children = waiting.get(r.rec.uuid);
    if (children) {
      waiting.delete(r.rec.uuid);
      for (const c of children) emit(c);
    }
  };
  for (const r of records) {
    const parent = r.rec.parentUuid ?? r.rec.logicalParentUuid;
    if (parent && present.has(parent) && !done.has(parent)) {
      const list = waiting.get(parent) ?? [];
      list.push(r);
      waiting.set(parent, list);
    } else emit(r);
  }
  for (const list of waiting.values()) for (const r of list) if (!done.has(r.rec.uuid)) emit(r);
  return out;
}

/** One record's message as a chat message for the turn reader, with what it says about itself in meta. */
function chatMessage(rec: Rec): Rec {
  const message = rec.message as Rec;
  const meta: Rec = { uuid: rec.uuid };
  if (typeof rec.parentUuid === "string") meta.parent_uuid = rec.parentUuid;
  if (typeof rec.timestamp === "string") meta.timestamp = rec.timestamp;
  if (rec.type === "assistant") {
    if (typeof message.model === "string") meta.model = message.model;
    if (typeof message.id === "string") meta.message_ids = [message.id];
  }
  if (rec.isCompactSummary === true) meta.compaction_summary = true;
  if (rec.isMeta === true) meta.is_meta = true;
  return { role: message.role, content: message.content, meta };
}

type Session = { key: string; sidechain: boolean; agentId?: string; records: Array<{ rec: Rec; line: number }> };

/** A sub-agent's message inside a `progress` record: the record as a conversation record of its sidechain, or undefined. */
function agentProgressRecord(rec: Rec): { rec: Rec; agentId: string } | undefined {
  const data = rec.data;
  if (rec.type !== "progress" || !isRecord(data) || data.type !== "agent_progress" || typeof data.agentId !== "string") return undefined;
  const inner = data.message;
  if (!isRecord(inner) || typeof inner.type !== "string" || !conversationTypes.has(inner.type) || !isRecord(inner.message)) return undefined;
  return { rec: { ...inner, sessionId: rec.sessionId, isSidechain: true, parentToolUseID: rec.parentToolUseID }, agentId: data.agentId };
}

/** Convert a coding-agent session log: one conversation per session (and one per session's sidechains and sub-agents). */
export function convertCodingAgentSession(lines: Line[]): Normalised {
  const skipped: Record<string, number> = {};
  let readFromProgress = 0;
  const sessions = new Map<string, Session>();
  let lastSession = "";
  for (const { line, value } of lines) {
    let rec = value as Rec;
    const type = rec.type as string;
    const agent = agentProgressRecord(rec);
    if (agent) {
      rec = agent.rec;
      readFromProgress++;
    } else if (!conversationTypes.has(type)) {
      const kind = type === "system" && typeof rec.subtype === "string" ? `system/${rec.subtype}` : type;
      skipped[kind] = (skipped[kind] ?? 0) + 1;
      continue;
    }
    const sessionId = typeof rec.sessionId === "string" ? rec.sessionId : lastSession;
    lastSession = sessionId;
    const sidechain = rec.isSidechain === true;
    const key = `${sessionId}\u0000${sidechain}\u0000${agent?.agentId ?? ""}`;
    let session = sessions.get(key);
    if (!session) {
      session = { key, sidechain, agentId: agent?.agentId, records: [] };
      sessions.set(key, session);
    }
    session.records.push({ rec, line });
  }

  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  let merged = 0;
  for (const session of sessions.values()) {
    const ordered = threadOrder(session.records);
    // Lines of one streamed reply (same message.id) become one message, at the place of its first line.
    const messages: Rec[] = [];
    const byId = new Map<string, Rec>();
    for (const { rec } of ordered) {
      const message = rec.message as Rec;
      const id = rec.type === "assistant" && typeof message.id === "string" ? message.id : undefined;
      const earlier = id ? byId.get(id) : undefined;
      if (earlier && Array.isArray(earlier.content) && Array.isArray(message.content)) {
        earlier.content = [...earlier.content, ...message.content];
        merged++;
        continue;
      }
      const chat = chatMessage(rec);
      if (Array.isArray(chat.content)) chat.content = [...chat.content];
      if (id) byId.set(id, chat);
      messages.push(chat);
    }
    const converted = convertMessages(messages);
    // A turn's message keeps the ids of every API reply folded into it.
    converted.sources.forEach((start, j) => {
      const target = converted.messages[j];
      if (typeof start !== "number" || !isRecord(target) || target.role !== "assistant" || !isRecord(target.meta)) return;
      const end = converted.sources.slice(j + 1).find((x): x is number => typeof x === "number") ?? messages.length;
      const ids = messages.slice(start, end).flatMap((m) => (isRecord(m.meta) && Array.isArray(m.meta.message_ids) ? m.meta.message_ids : []));
      target.meta = { ...target.meta, message_ids: ids };
    });
    const meta: Rec = {};
    for (const [from, to] of sessionFields) {
      const holder = ordered.find((r) => typeof r.rec[from] === "string");
      if (holder) meta[to] = holder.rec[from];
    }
    const models = [...new Set(ordered.map((r) => (r.rec.message as Rec).model).filter((m): m is string => typeof m === "string" && !m.startsWith("<")))];
    if (models.length) meta.models = models;
    const stamps = ordered.map((r) => r.rec.timestamp).filter((t): t is string => typeof t === "string");
    if (stamps.length) {
      meta.started_at = stamps[0];
      meta.ended_at = stamps[stamps.length - 1];
    }
    if (session.sidechain) meta.sidechain = true;
    if (session.agentId) {
      meta.agent_id = session.agentId;
      const call = ordered.find((r) => typeof r.rec.parentToolUseID === "string");
      if (call) meta.parent_tool_use_id = call.rec.parentToolUseID;
    }
    const title = session.agentId ? `Sub-agent ${session.agentId} of session` : session.sidechain ? "Sidechain of session" : "Session";
    conversations.push({ name: `${title} ${String(meta.session_id ?? "").slice(0, 8)}`.trim(), meta, messages: converted.messages });
    sources.push({
      path: "",
      messagesPath: "",
      line: ordered[0]?.line,
      // What a record says: its message, and the tool's structured copy of a result (counted where it holds more).
      rawMessages: ordered.map((r) => (r.rec.toolUseResult === undefined ? { message: r.rec.message } : { message: r.rec.message, toolUseResult: r.rec.toolUseResult })),
      wholeConversation: true,
    });
  }

  const reasons = [
    `${countText(merged)} lines were parts of a streamed reply (same message.id) and were merged into it`,
    "tool_result blocks (sent as role user) and tool_use, thinking and text blocks became steps of the assistant turn, so a turn between two human inputs is one message",
  ];
  if (readFromProgress) reasons.push(`${countText(readFromProgress)} progress lines held a sub-agent's messages (agent_progress): each sub-agent is a conversation of its own`);
  if (skipped["system/compact_boundary"]) reasons.push("the compaction summary after compact_boundary is kept as a user message marked compaction_summary in its meta");
  return {
    format: "coding_agent_session",
    data: { conversations },
    sources,
    structural: ["uuid", "parent_uuid", "parentUuid", "message_ids", "signature", "stop_reason", "stop_sequence", "usage", "model"],
    records: { inFile: lines.length, unit: "lines", skipped, reasons },
  };
}
