/**
 * A conversation as an ATIF trajectory (Harbor's Agent Trajectory Interchange Format, written as ATIF-v1.6),
 * the inverse of lib/import/formats/atif.ts. System and user messages are `system`/`user` steps; an assistant
 * message is one `agent` step per model call: where the import recorded them (`turn_messages` in its meta, with
 * each call's timestamp, model and metrics), else wherever a step starts a new call (reasoning or text after a
 * call's results, a second reasoning or text). Each agent step holds its reasoning, its text, its calls and, as
 * its observation, the results that follow them, paired with the calls in order (`source_call_id`).
 *
 * What ATIF has no field for rides under `extra.turnscope`, so an import of the file gives the same conversation
 * back: at the root the conversation's name, description, goal, ids and other meta; on a step the message's other
 * meta, and — only where ATIF's fields cannot say it — the message's own text (`content`), its steps as stored
 * (`steps`: a step holding a call and its result at once, an agent's name, structured output), its role (`tool`),
 * and `message_start` where an assistant message follows another.
 */
import type { Conversation } from "@/lib/schemas/datasets";
import { isRecord } from "@/lib/vocabulary";

export const ATIF_SCHEMA_VERSION = "ATIF-v1.6";

type Rec = Record<string, unknown>;
type WireStep = Conversation["messages"][number]["steps"][number];
type WireMessage = Conversation["messages"][number];

const str = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);

/** Root meta keys that are ATIF's own fields, with the type each must have to be written there (`schema_version` is the writer's). */
const ROOT_FIELDS: Record<string, (v: unknown) => boolean> = {
  schema_version: (v) => typeof v === "string",
  session_id: (v) => typeof v === "string",
  agent: isRecord,
  notes: (v) => typeof v === "string",
  final_metrics: isRecord,
  trajectory_id: (v) => typeof v === "string",
  continued_trajectory_ref: (v) => typeof v === "string",
  subagent_trajectories: Array.isArray,
  extra: isRecord,
};
const isRootField = (k: string, v: unknown) => Object.prototype.hasOwnProperty.call(ROOT_FIELDS, k) && ROOT_FIELDS[k](v);

/** Step meta keys that are ATIF step fields, with the type each must have to be written there. */
const STEP_FIELDS: Record<string, (v: unknown) => boolean> = {
  timestamp: (v) => typeof v === "string",
  model_name: (v) => typeof v === "string",
  reasoning_effort: (v) => typeof v === "string" || typeof v === "number",
  metrics: isRecord,
  llm_call_count: (v) => typeof v === "number",
  is_copied_context: (v) => typeof v === "boolean",
};

/** Meta keys the writer reads itself and never copies. */
const CONSUMED = new Set(["turn_messages", "atif_results", "extra"]);

type Kind = "thinking" | "output" | "call" | "result";

/** What one stored step holds, when it holds exactly one thing ATIF can say; undefined otherwise. */
function kindOf(s: WireStep): Kind | undefined {
  const kinds: Kind[] = [];
  if (s.thinking !== null) kinds.push("thinking");
  if (s.output_content !== null) kinds.push("output");
  if (s.tool_call !== null) kinds.push("call");
  if (s.tool_result !== null) kinds.push("result");
  if (kinds.length !== 1 || s.output_structured !== null || s.agent_name !== null) return undefined;
  return kinds[0];
}

const ORDER: Record<Kind, number> = { thinking: 0, output: 1, call: 2, result: 3 };

/** The step in the import's shape (snake_case, nulls left out). */
function storedStep(s: WireStep): Rec {
  const out: Rec = {};
  for (const k of ["thinking", "tool_call", "tool_result", "output_content", "output_structured", "model_name", "agent_name"] as const) if (s[k] !== null) out[k] = s[k];
  return out;
}

/** Split `[from, to)` where a step cannot follow the one before it within one model call. */
function splitByOrder(steps: WireStep[], from: number, to: number): number[] {
  const starts = [from];
  let phase = -1;
  let seen = new Set<Kind>();
  for (let i = from; i < to; i++) {
    const kind = kindOf(steps[i]) ?? "output";
    const order = ORDER[kind];
    const again = (kind === "thinking" || kind === "output") && seen.has(kind);
    if (i > from && (order < phase || again)) {
      starts.push(i);
      seen = new Set();
    }
    phase = order;
    seen.add(kind);
  }
  return starts;
}

type Group = { from: number; to: number; meta: Rec };

/** The message's model calls: the import's `turn_messages` when they fit its steps, each split further where the order says so. */
function groupsOf(m: WireMessage, own: Rec): Group[] {
  const n = m.steps.length;
  const recorded = isRecord(m.meta) && Array.isArray(m.meta.turn_messages) ? (m.meta.turn_messages as unknown[]) : undefined;
  let marks: Array<{ from: number; meta: Rec }> = [{ from: 0, meta: own }];
  if (recorded && recorded.length) {
    const read = recorded.map((e) => (isRecord(e) && Number.isInteger(e.first_step) ? { from: e.first_step as number, meta: isRecord(e.meta) ? e.meta : {} } : undefined));
    const fits = read.every((e, i) => e && e.from >= 0 && e.from <= n && (i === 0 ? e.from === 0 : e.from >= (read[i - 1] as { from: number }).from));
    if (fits) marks = read as Array<{ from: number; meta: Rec }>;
  }
  const groups: Group[] = [];
  marks.forEach((mark, i) => {
    const to = i + 1 < marks.length ? marks[i + 1].from : n;
    const starts = splitByOrder(m.steps, mark.from, to);
    starts.forEach((s, k) => groups.push({ from: s, to: k + 1 < starts.length ? starts[k + 1] : to, meta: k === 0 ? mark.meta : {} }));
  });
  return groups;
}

/** A step's ATIF fields from meta, and the rest of the meta for `extra.turnscope.meta`. */
function stepFields(meta: Rec): { fields: Rec; extra?: Rec; rest: Rec } {
  const fields: Rec = {};
  const rest: Rec = {};
  for (const [k, v] of Object.entries(meta)) {
    if (CONSUMED.has(k)) continue;
    if (Object.prototype.hasOwnProperty.call(STEP_FIELDS, k) && STEP_FIELDS[k](v)) fields[k] = v;
    else rest[k] = v;
  }
  return { fields, extra: isRecord(meta.extra) ? meta.extra : meta.extra === undefined ? undefined : { value: meta.extra }, rest };
}

/** `extra` with Turnscope's own part added (left out when empty). */
function withTurnscope(extra: Rec | undefined, turnscope: Rec): Rec | undefined {
  const own = Object.fromEntries(Object.entries(turnscope).filter(([, v]) => v !== undefined));
  if (!Object.keys(own).length) return extra;
  return { ...(extra ?? {}), turnscope: own };
}

const resultText = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));

/** One model call of an assistant message as an agent step. */
function agentStep(m: WireMessage, g: Group, agentModel: string | undefined, turnscope: Rec): Rec {
  const slice = m.steps.slice(g.from, g.to);
  const exact = slice.every((s) => kindOf(s) !== undefined);
  const { fields, extra, rest } = stepFields(g.meta);
  const reasoning = slice.filter((s) => s.thinking !== null).map((s) => s.thinking as string);
  const texts = slice.filter((s) => s.output_content !== null).map((s) => s.output_content as string);
  const calls: Rec[] = [];
  const results: Rec[] = [];
  slice.forEach((s) => {
    if (s.tool_call !== null) {
      const call = isRecord(s.tool_call) ? s.tool_call : { name: String(s.tool_call) };
      const id = str(call.id) ?? `call_${m.id}_${m.steps.indexOf(s) + 1}`;
      const args = isRecord(call.arguments) ? call.arguments : call.arguments === undefined || call.arguments === null ? {} : { input: call.arguments };
      calls.push({ tool_call_id: id, function_name: str(call.name) ?? "tool", arguments: args });
      // A step holding a call and its result: the result answers that call.
      if (s.tool_result !== null) results.push({ source_call_id: id, content: resultText(s.tool_result) });
    } else if (s.tool_result !== null) results.push({ content: resultText(s.tool_result) });
  });
  // Results pair with the step's calls in order, unless the import kept how they paired.
  const kept = Array.isArray(g.meta.atif_results) && g.meta.atif_results.length === results.length ? (g.meta.atif_results as unknown[]) : undefined;
  const unpaired = calls.filter((c) => !results.some((r) => r.source_call_id === c.tool_call_id));
  let next = 0;
  results.forEach((r, k) => {
    if (kept) {
      const own = isRecord(kept[k]) ? (kept[k] as Rec) : {};
      Object.assign(r, own);
      if (own.source_call_id === undefined) delete r.source_call_id;
    } else if (r.source_call_id === undefined && next < unpaired.length) r.source_call_id = unpaired[next++].tool_call_id;
  });
  const model = (fields.model_name as string | undefined) ?? slice.find((s) => s.model_name !== null && s.tool_result === null)?.model_name ?? undefined;
  const step: Rec = { source: "agent" };
  if (fields.timestamp !== undefined) step.timestamp = fields.timestamp;
  if (model && model !== agentModel) step.model_name = model;
  for (const k of ["reasoning_effort"]) if (fields[k] !== undefined) step[k] = fields[k];
  step.message = texts.join("\n\n");
  if (reasoning.length) step.reasoning_content = reasoning.join("\n\n");
  if (calls.length) step.tool_calls = calls;
  if (results.length) step.observation = { results };
  for (const k of ["metrics", "llm_call_count", "is_copied_context"]) if (fields[k] !== undefined) step[k] = fields[k];
  const stepExtra = withTurnscope(extra, {
    ...turnscope,
    meta: Object.keys(rest).length ? rest : undefined,
    steps: exact ? undefined : slice.map(storedStep),
  });
  if (stepExtra) step.extra = stepExtra;
  return step;
}

/** An assistant message as its agent steps. */
function agentSteps(m: WireMessage, agentModel: string | undefined, startsMessage: boolean): Rec[] {
  const meta = isRecord(m.meta) ? m.meta : {};
  const { turn_messages: _t, ...own } = meta;
  const lastText = [...m.steps].reverse().find((s) => s.output_content !== null)?.output_content ?? null;
  const first: Rec = { message_start: startsMessage || undefined };
  if (!m.steps.length) {
    const { fields, extra, rest } = stepFields(own);
    const step: Rec = { source: "agent", ...(fields.timestamp !== undefined ? { timestamp: fields.timestamp } : {}) };
    if (typeof fields.model_name === "string" && fields.model_name !== agentModel) step.model_name = fields.model_name;
    step.message = m.content ?? "";
    for (const k of ["reasoning_effort", "metrics", "llm_call_count", "is_copied_context"]) if (fields[k] !== undefined) step[k] = fields[k];
    const stepExtra = withTurnscope(extra, { ...first, content: m.content === null ? null : undefined, meta: Object.keys(rest).length ? rest : undefined });
    if (stepExtra) step.extra = stepExtra;
    return [step];
  }
  const groups = groupsOf(m, own);
  // One text step alone would come back as a message without steps: kept as stored.
  const loneText = groups.length === 1 && m.steps.every((s) => kindOf(s) === "output");
  // The message's text, where it is not its last text step (what an import would make it).
  const content = m.content !== lastText ? m.content : undefined;
  return groups.map((g, i) => {
    const step = agentStep(m, g, agentModel, i === 0 ? { ...first, content } : {});
    if (loneText) {
      const extra = isRecord(step.extra) ? step.extra : {};
      const ts = isRecord(extra.turnscope) ? extra.turnscope : {};
      step.extra = { ...extra, turnscope: { ...ts, steps: m.steps.map(storedStep) } };
    }
    return step;
  });
}

/** A system, user or tool message as a step (a tool message, which ATIF has no source for, as a system step). */
function otherStep(m: WireMessage): Rec {
  const meta = isRecord(m.meta) ? m.meta : {};
  const { fields, extra, rest } = stepFields(meta);
  const step: Rec = { source: m.role === "user" ? "user" : "system" };
  if (fields.timestamp !== undefined) step.timestamp = fields.timestamp;
  step.message = m.content ?? "";
  const stepExtra = withTurnscope(extra, {
    role: m.role === "tool" ? "tool" : undefined,
    content: m.content === null ? null : undefined,
    meta: Object.keys(rest).length ? rest : undefined,
    steps: m.steps.length ? m.steps.map(storedStep) : undefined,
  });
  if (stepExtra) step.extra = stepExtra;
  return step;
}

/** Tool definitions in OpenAI's function shape, from the conversation's agents (a name → definition map, or a list). */
export function toolDefinitionsOf(agents: unknown): Rec[] {
  const out: Rec[] = [];
  const seen = new Set<string>();
  for (const agent of Array.isArray(agents) ? agents : []) {
    if (!isRecord(agent)) continue;
    const list = isRecord(agent.tools) ? Object.entries(agent.tools).map(([name, def]) => ({ name, def })) : Array.isArray(agent.tools) ? agent.tools.map((def) => ({ name: "", def })) : [];
    for (const { name: key, def } of list) {
      if (isRecord(def) && def.type === "function" && isRecord(def.function)) {
        const name = str(def.function.name);
        if (name && !seen.has(name)) {
          seen.add(name);
          out.push(def);
        }
        continue;
      }
      const fn = isRecord(def) ? def : {};
      const name = str(fn.name) ?? key;
      if (!name || seen.has(name)) continue;
      seen.add(name);
      const parameters = fn.parameters ?? fn.input_schema;
      out.push({ type: "function", function: { name, ...(typeof fn.description === "string" ? { description: fn.description } : {}), ...(parameters !== undefined ? { parameters } : {}) } });
    }
  }
  return out;
}

/** The model most of the conversation's steps name. */
function usualModel(c: Conversation): string | undefined {
  const counts = new Map<string, number>();
  for (const m of c.messages) for (const s of m.steps) if (s.model_name) counts.set(s.model_name, (counts.get(s.model_name) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
}

/** One conversation as an ATIF trajectory. */
export function conversationToAtif(c: Conversation): Rec {
  const meta = isRecord(c.meta) ? c.meta : {};
  const rest: Rec = {};
  for (const [k, v] of Object.entries(meta)) if (!isRootField(k, v)) rest[k] = v;
  const agentMeta = isRecord(meta.agent) ? meta.agent : {};
  const firstAgent = Array.isArray(c.agents) && isRecord(c.agents[0]) ? (c.agents[0] as Rec) : {};
  const tools = toolDefinitionsOf(c.agents);
  const agent: Rec = {
    ...agentMeta,
    name: str(agentMeta.name) ?? str(firstAgent.name) ?? "unknown",
    version: str(agentMeta.version) ?? "unknown",
  };
  const model = str(agentMeta.model_name) ?? usualModel(c);
  if (model) agent.model_name = model;
  if (tools.length) agent.tool_definitions = tools;
  else delete agent.tool_definitions;

  const steps: Rec[] = [];
  let previous: WireMessage | undefined;
  for (const m of c.messages) {
    const out = m.role === "assistant" ? agentSteps(m, model, previous?.role === "assistant") : [otherStep(m)];
    for (const s of out) steps.push({ step_id: steps.length + 1, ...s });
    previous = m;
  }
  const trajectory: Rec = {
    schema_version: ATIF_SCHEMA_VERSION,
    session_id: isRootField("session_id", meta.session_id) ? meta.session_id : `turnscope-conversation-${c.id}`,
    agent,
    steps,
  };
  for (const k of ["notes", "final_metrics", "trajectory_id", "continued_trajectory_ref", "subagent_trajectories"]) if (isRootField(k, meta[k])) trajectory[k] = meta[k];
  const extra = withTurnscope(isRecord(meta.extra) ? meta.extra : undefined, {
    conversation_id: c.id,
    dataset_id: c.dataset_id,
    name: c.name ?? undefined,
    description: c.description ?? undefined,
    goal: c.goal ?? undefined,
    meta: Object.keys(rest).length ? rest : undefined,
  });
  if (extra) trajectory.extra = extra;
  return trajectory;
}
