/**
 * ATIF, Harbor's Agent Trajectory Interchange Format (RFC 0001, ATIF-v1.0 to v1.7): one trajectory is
 * `{schema_version: "ATIF-v1.x", session_id, agent: {name, version, model_name?, tool_definitions?, extra?},
 * steps: [...], notes?, final_metrics?, extra?}`; a step is `{step_id, timestamp?, source: "system" | "user" |
 * "agent", message (text, or content parts since v1.6), model_name?, reasoning_effort?, reasoning_content?,
 * tool_calls?: [{tool_call_id, function_name, arguments}], observation?: {results: [{source_call_id?, content?,
 * subagent_trajectory_ref?}]}, metrics?, extra?}`.
 *
 * A file holds one trajectory, a list of them, or JSON Lines of one per line (what Turnscope's ATIF export
 * writes). Each becomes a conversation: system and user steps are messages; the agent steps between two of them
 * are one assistant turn whose steps are, per agent step, its reasoning (thinking), its message (output), its
 * calls, then the observation's results in the order of the calls they answer (`source_call_id`); results that
 * answer no call of the step come after. Each agent step's own fields (timestamp, model, metrics, extra) are its
 * meta: the turn's meta is its first agent step's, and with several, all are listed under `turn_messages`
 * (`first_step`: where each begins), so the export writes the same steps again. The agent (without its tool
 * definitions, which become the conversation's agent's `tools`), the session, notes, final metrics and the
 * trajectory's `extra` are the conversation's meta. What Turnscope's own export put under `extra.turnscope`
 * (the conversation's name, description and other meta; a message's other meta) is read back into place.
 */
import { isRecord } from "../issues";
import type { Normalised } from "./normalised";
import type { ConversationSource } from "./source-paths";
import { parseMaybeJson, readContent } from "./turns";

type Rec = Record<string, unknown>;

/** Fields of a step that are its content, not its meta. */
const STEP_CONTENT = new Set(["step_id", "source", "message", "reasoning_content", "tool_calls", "observation"]);
/** Fields of the trajectory that are its content, not the conversation's meta. */
const ROOT_CONTENT = new Set(["steps", "agent", "extra"]);
const SOURCE_ROLES: Record<string, string> = { system: "system", user: "user", agent: "assistant" };

const str = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);

/** True for an ATIF trajectory: an `ATIF-v…` schema version with steps, or (a version written bare, "1.4") an agent and steps shaped as ATIF's. */
export function isAtifTrajectory(value: unknown): value is Rec {
  if (!isRecord(value) || !Array.isArray(value.steps)) return false;
  if (typeof value.schema_version === "string" && /^ATIF-v\d/i.test(value.schema_version)) return true;
  const steps = value.steps.slice(0, 3);
  return (
    isRecord(value.agent) &&
    steps.length > 0 &&
    steps.every((s) => isRecord(s) && typeof s.step_id === "number" && typeof s.source === "string" && "message" in s)
  );
}

/** A step's message as text: a string as it is, content parts (v1.6) as their text with media as a placeholder. */
function messageText(message: unknown): string {
  if (typeof message === "string") return message;
  const pieces = readContent(message);
  if (!pieces) return message === undefined || message === null ? "" : JSON.stringify(message);
  return pieces.filter((p) => p.kind === "text").map((p) => (p as { text: string }).text).join("\n");
}

/** A result's content as the stored value: JSON text parsed, text parts joined, other parts (images) kept as they are. */
function resultValue(result: Rec): unknown {
  const content = result.content;
  if (Array.isArray(content)) {
    const texts = content.every((p) => isRecord(p) && p.type === "text" && typeof p.text === "string");
    return texts ? content.map((p) => (p as Rec).text as string).join("\n") : content;
  }
  if (content === undefined || content === null) {
    // A result that only references a subagent's trajectory: the reference is what it says.
    const { source_call_id: _id, content: _content, ...rest } = result;
    return Object.keys(rest).length ? rest : "";
  }
  return parseMaybeJson(content);
}

/** Arguments as an object: JSON text parsed; anything else (off the spec) kept under `input`. */
function argumentsOf(value: unknown): Rec {
  const parsed = parseMaybeJson(value);
  if (isRecord(parsed)) return parsed;
  return parsed === undefined || parsed === null ? {} : { input: parsed };
}

/** `extra` without Turnscope's own key, and that key. */
function splitExtra(extra: unknown): { extra?: Rec; turnscope?: Rec } {
  if (!isRecord(extra)) return extra === undefined ? {} : { extra: extra as Rec };
  const { turnscope, ...rest } = extra;
  return { extra: Object.keys(rest).length ? rest : undefined, turnscope: isRecord(turnscope) ? turnscope : undefined };
}

/** A step's meta: its fields other than its content, with what Turnscope's export kept under `extra.turnscope.meta` put back. */
function stepMeta(step: Rec): Rec {
  const meta: Rec = {};
  const { extra, turnscope } = splitExtra(step.extra);
  if (turnscope && isRecord(turnscope.meta)) Object.assign(meta, turnscope.meta);
  for (const [k, v] of Object.entries(step)) if (!STEP_CONTENT.has(k) && k !== "extra") meta[k] = v;
  if (extra) meta.extra = extra;
  return meta;
}

/** An assistant turn being read; `content` and `exact` set from what Turnscope's export wrote under `extra.turnscope`. */
type Turn = { message: Rec; steps: Rec[]; metas: Array<{ first_step: number; meta: Rec }>; content?: string | null; exact?: boolean };

function closeTurn(turn: Turn): void {
  const texts = turn.steps.filter((s) => typeof s.output_content === "string").map((s) => s.output_content as string);
  // One agent step of text alone is a plain message.
  const plain = !turn.exact && turn.metas.length === 1 && turn.steps.every((s) => "output_content" in s);
  if (plain) turn.message.content = texts.length ? texts.join("\n\n") : "";
  else {
    turn.message.content = texts.length ? texts[texts.length - 1] : null;
    if (turn.steps.length) turn.message.steps = turn.steps;
  }
  if (turn.content !== undefined) turn.message.content = turn.content;
  const [first] = turn.metas;
  const own = first ? first.meta : {};
  if (turn.metas.length > 1) turn.message.meta = { ...own, turn_messages: turn.metas.map((m) => ({ role: "assistant", first_step: m.first_step, meta: m.meta })) };
  else if (Object.keys(own).length) turn.message.meta = own;
}

/** One agent step's steps into the turn: reasoning, message, calls, then results in the order of their calls. */
function addAgentStep(turn: Turn, step: Rec, defaultModel: string | undefined): void {
  const meta = stepMeta(step);
  const first_step = turn.steps.length;
  const own = splitExtra(step.extra).turnscope;
  if (own && own.content !== undefined && (typeof own.content === "string" || own.content === null)) turn.content = own.content;
  if (own && Array.isArray(own.steps)) {
    // The steps as Turnscope stored them, where ATIF's fields could not say them (written by Turnscope's export).
    turn.steps.push(...own.steps.filter(isRecord));
    turn.exact = true;
    turn.metas.push({ first_step, meta });
    return;
  }
  const model = str(step.model_name) ?? defaultModel;
  const stamp = (s: Rec): Rec => (model ? { ...s, model_name: model } : s);
  const reasoning = str(step.reasoning_content);
  if (reasoning) turn.steps.push(stamp({ thinking: reasoning }));
  const text = messageText(step.message);
  if (text) turn.steps.push(stamp({ output_content: text }));
  const calls = (Array.isArray(step.tool_calls) ? step.tool_calls : []).filter(isRecord);
  for (const c of calls) {
    const call: Rec = { name: str(c.function_name) ?? c.function_name ?? c.name, arguments: argumentsOf(c.arguments) };
    if (typeof c.tool_call_id === "string") call.id = c.tool_call_id;
    turn.steps.push(stamp({ tool_call: call }));
  }
  const results = (isRecord(step.observation) && Array.isArray(step.observation.results) ? step.observation.results : []).filter(isRecord);
  const order: Rec[] = [];
  const taken = new Set<Rec>();
  for (const c of calls) {
    for (const r of results) {
      if (taken.has(r) || typeof c.tool_call_id !== "string" || r.source_call_id !== c.tool_call_id) continue;
      taken.add(r);
      order.push(r);
    }
  }
  for (const r of results) if (!taken.has(r)) order.push(r);
  for (const r of order) turn.steps.push({ tool_result: resultValue(r) });
  // Results stored in call order pair with the calls by position. Where that does not say it all (a call left
  // unanswered, a result of no call, a result's other fields), each result's own fields are kept in order.
  const positional = order.every((r, k) => r.source_call_id === (calls[k]?.tool_call_id ?? undefined) && Object.keys(r).every((key) => key === "source_call_id" || key === "content"));
  if (!positional) meta.atif_results = order.map(({ content: _content, ...rest }) => rest);
  turn.metas.push({ first_step, meta });
}

/** One trajectory as a Turnscope conversation, and how many steps it had. */
function convertTrajectory(t: Rec, skipped: Record<string, number>): Rec {
  const agent = isRecord(t.agent) ? t.agent : {};
  const defaultModel = str(agent.model_name);
  const messages: Rec[] = [];
  let turn: Turn | undefined;
  const close = () => {
    if (turn) closeTurn(turn);
    turn = undefined;
  };
  for (const step of t.steps as unknown[]) {
    if (!isRecord(step)) {
      skipped["steps that are not objects"] = (skipped["steps that are not objects"] ?? 0) + 1;
      continue;
    }
    const own = splitExtra(step.extra).turnscope;
    if (step.source === "agent") {
      // Turnscope's export marks an assistant message that follows another: it starts a turn of its own.
      if (turn && own?.message_start === true) close();
      if (!turn) {
        turn = { message: { role: "assistant" }, steps: [], metas: [] };
        messages.push(turn.message);
      }
      addAgentStep(turn, step, defaultModel);
      continue;
    }
    close();
    // An unknown source is passed on as the role, so validation names it with its path.
    let role = typeof step.source === "string" && Object.prototype.hasOwnProperty.call(SOURCE_ROLES, step.source) ? SOURCE_ROLES[step.source] : step.source;
    // A tool message Turnscope's export wrote as a system step.
    if (step.source === "system" && own?.role === "tool") role = "tool";
    const message: Rec = { role, content: own && (typeof own.content === "string" || own.content === null) ? own.content : messageText(step.message) };
    if (own && Array.isArray(own.steps) && own.steps.length) message.steps = own.steps.filter(isRecord);
    const meta = stepMeta(step);
    // A system step's observation (a subagent's work, a compaction) stays with it.
    if (step.observation !== undefined) meta.observation = step.observation;
    if (Array.isArray(step.tool_calls)) meta.tool_calls = step.tool_calls;
    if (typeof step.reasoning_content === "string") meta.reasoning_content = step.reasoning_content;
    if (Object.keys(meta).length) message.meta = meta;
    messages.push(message);
  }
  close();

  const { extra, turnscope } = splitExtra(t.extra);
  const meta: Rec = turnscope && isRecord(turnscope.meta) ? { ...turnscope.meta } : {};
  for (const [k, v] of Object.entries(t)) if (!ROOT_CONTENT.has(k)) meta[k] = v;
  const { tool_definitions: tools, ...agentInfo } = agent;
  if (Object.keys(agentInfo).length) meta.agent = agentInfo;
  if (extra) meta.extra = extra;
  const conversation: Rec = { meta, messages };
  if (turnscope && typeof turnscope.name === "string") conversation.name = turnscope.name;
  if (turnscope && typeof turnscope.description === "string") conversation.description = turnscope.description;
  if (Array.isArray(tools) && tools.length) conversation.agents = [{ ...(str(agent.name) ? { name: agent.name } : {}), tools }];
  return conversation;
}

/** Convert trajectories (the file's root, a list of them, or JSON Lines) to conversations. */
export function convertAtifTrajectories(units: Array<{ value: Rec; path: string; line?: number }>): Normalised {
  const skipped: Record<string, number> = {};
  const conversations = units.map((u) => convertTrajectory(u.value, skipped));
  const sources: ConversationSource[] = units.map((u) => ({
    path: u.path,
    messagesPath: u.path ? `${u.path}.steps` : "steps",
    line: u.line,
    raw: u.value,
    rawMessages: u.value.steps as unknown[],
    wholeConversation: true,
  }));
  const steps = units.reduce((n, u) => n + (u.value.steps as unknown[]).length, 0);
  return {
    format: "atif",
    data: { conversations },
    sources,
    structural: ["schema_version", "step_id", "source", "tool_call_id", "source_call_id", "timestamp", "session_id", "trajectory_id"],
    records: {
      inFile: steps,
      unit: `steps in ${units.length} trajector${units.length === 1 ? "y" : "ies"}`,
      skipped,
      reasons: [
        "each trajectory is a conversation; the agent steps between two user or system steps are one assistant turn, their reasoning, message, tool calls and observations its steps (results in the order of their calls)",
        "each agent step's timestamp, model and metrics are its turn's meta; the agent, session, notes and final metrics the conversation's",
      ],
    },
  };
}
