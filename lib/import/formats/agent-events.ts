/**
 * Agent event streams (OpenHands trajectories: a flat list of events, each an action or an
 * observation): `{id, timestamp, source: agent|user|environment, message, action, args,
 * tool_call_metadata?}` and `{id, source, cause, observation, content, extras}`. One conversation per
 * run: a user `message` action is a user message, an agent `message` an assistant reply, `system` the
 * system prompt; every other agent action is a tool call (named by `tool_call_metadata.function_name`,
 * else the action, with `args` as its arguments and the model's `tool_call_id`) preceded by its
 * `thought` as a thinking step; an observation whose `cause` is an action is that call's result.
 * Environment state changes are skipped and counted; the run's outcome (the last agent state, the
 * `finish` action's arguments, error observations) goes to the conversation's meta.
 */
import { isRecord } from "../issues";
import type { Normalised } from "./normalised";
import type { ConversationSource } from "./source-paths";
import { convertMessages, toolsAsAgents } from "./turns";

type Rec = Record<string, unknown>;

const isEvent = (e: unknown): e is Rec =>
  isRecord(e) && (typeof e.action === "string" || typeof e.observation === "string") && (e.source === "agent" || e.source === "user" || e.source === "environment");

/** The events of one run: a bare list, or `{events: [...]}` / `{history: [...]}`. */
export function eventsOf(value: unknown): Rec[] | undefined {
  const list = Array.isArray(value) ? value : isRecord(value) ? (value.events ?? value.history) : undefined;
  if (!Array.isArray(list) || !list.length || !list.every(isEvent)) return undefined;
  return list.some((e) => typeof e.action === "string") ? list : undefined;
}

const textOf = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);

/** When the run started and ended, from its first and last events' timestamps. */
function runTimes(events: Rec[]): Rec {
  const first = events[0]?.timestamp;
  const last = events[events.length - 1]?.timestamp;
  return typeof first === "string" && typeof last === "string" ? { started_at: first, ended_at: last } : {};
}

/** Convert event streams (one per unit) to conversations. */
export function convertAgentEvents(runs: Array<{ value: unknown; events: Rec[]; path: string; line?: number }>): Normalised {
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  const skipped: Record<string, number> = {};
  let total = 0;
  for (const run of runs) {
    total += run.events.length;
    const messages: Rec[] = [];
    const outcome: Rec = {};
    const errors: string[] = [];
    // What an observation says besides its text (the exit code, the edit's diff): kept in the conversation's meta.
    const observed: Rec[] = [];
    let agents: unknown[] | undefined;
    const models = new Set<string>();
    // The system action's other arguments (the agent's version and class).
    let system: Rec | undefined;
    // Ids of the actions that became tool calls: an observation they caused is that call's result.
    const calls = new Set<string>();
    const skip = (kind: string) => {
      skipped[kind] = (skipped[kind] ?? 0) + 1;
    };
    for (const e of run.events) {
      const args = isRecord(e.args) ? e.args : {};
      const meta = { event_id: e.id, timestamp: e.timestamp };
      if (typeof e.observation === "string") {
        if (e.observation === "agent_state_changed") {
          const state = isRecord(e.extras) ? e.extras.agent_state : undefined;
          if (typeof state === "string") outcome.agent_state = state;
          skip("agent_state_changed");
          continue;
        }
        if (e.observation === "error") errors.push(String(e.content ?? e.message ?? ""));
        if (e.observation === "null" || (e.content === "" && e.cause === undefined)) {
          skip(`observation/${e.observation}`);
          continue;
        }
        const extras = isRecord(e.extras) && Object.keys(e.extras).length ? e.extras : undefined;
        const answers = e.cause !== undefined && e.cause !== null && calls.has(String(e.cause));
        if (!answers) {
          // Caused by no call (workspace context recalled for the prompt, an error ending the run): not a tool
          // result; its text stays in the conversation's meta.
          observed.push({ event_id: e.id, cause: e.cause, observation: e.observation, content: e.content, extras });
          skip(`observation/${e.observation} answering no call`);
          continue;
        }
        if (extras || e.success !== undefined) observed.push({ event_id: e.id, cause: e.cause, observation: e.observation, success: e.success, extras });
        messages.push({ role: "tool", content: textOf(e.content) ?? textOf(e.message) ?? "", meta });
        continue;
      }
      const action = e.action as string;
      const thought = textOf(args.thought) ?? textOf(e.thought);
      if (action === "system") {
        agents ??= toolsAsAgents(args.tools);
        const { content: _content, tools: _tools, ...settings } = args;
        if (Object.keys(settings).length) system = settings;
      }
      if (action === "message" || action === "system") {
        const role = action === "system" ? "system" : e.source === "user" ? "user" : "assistant";
        messages.push({ role, content: textOf(args.content) ?? textOf(e.message) ?? "", thinking: role === "assistant" ? thought : undefined, meta });
        continue;
      }
      // The environment's actions, and the ones made for the user (a `recall` of workspace context for the prompt):
      // nobody called a tool.
      if (action === "change_agent_state" || e.source === "environment" || e.source === "user") {
        skip(`action/${action}`);
        continue;
      }
      if (action === "finish") outcome.finish = args;
      const tcm = isRecord(e.tool_call_metadata) ? e.tool_call_metadata : undefined;
      // The model's whole response is repeated on each action it made: its calls are these steps, its model kept once.
      const model = tcm && isRecord(tcm.model_response) ? textOf(tcm.model_response.model) : undefined;
      if (model) models.add(model);
      // A `think` the model wrote without calling a tool is reasoning; one made by a tool call is that call.
      if (action === "think" && !tcm) {
        messages.push({ role: "assistant", content: null, thinking: thought, meta });
        continue;
      }
      // A `think` call's thought is its argument as well as the reasoning step before it.
      const { thought: _thought, ...rest } = args;
      const callArgs = action === "think" ? args : rest;
      const finalText = action === "finish" ? (textOf(args.final_thought) ?? textOf(args.message)) : undefined;
      if (e.id !== undefined && e.id !== null) calls.add(String(e.id));
      messages.push({
        role: "assistant",
        content: finalText ?? null,
        thinking: thought,
        tool_calls: [{ id: tcm?.tool_call_id, function: { name: textOf(tcm?.function_name) ?? action, arguments: callArgs } }],
        meta,
      });
    }
    if (errors.length) outcome.errors = errors;
    const converted = convertMessages(messages);
    const container = isRecord(run.value) ? Object.fromEntries(Object.entries(run.value).filter(([k]) => k !== "events" && k !== "history")) : {};
    // An evaluation output's run-level error (the iteration limit reached) is the run's outcome too.
    if (typeof container.error === "string" && container.error) outcome.error = container.error;
    const name = typeof container.instance_id === "string" ? container.instance_id : undefined;
    const conversation: Rec = { name, meta: { ...container, outcome, ...(observed.length ? { observations: observed } : {}), ...(models.size ? { models: [...models] } : {}), ...runTimes(run.events), ...(system ? { system_args: system } : {}) }, messages: converted.messages };
    if (agents) conversation.agents = agents;
    conversations.push(conversation);
    sources.push({ path: run.path, messagesPath: run.path, line: run.line, rawMessages: run.events, wholeConversation: true });
  }
  return {
    format: "agent_events",
    data: { conversations },
    sources,
    structural: ["source", "action", "observation", "timestamp", "tool_call_id", "model_response", "confirmation_state", "security_risk"],
    records: {
      inFile: total,
      unit: "events",
      skipped,
      reasons: ["each agent action is a tool call step (its thought a thinking step) and the observation it caused that call's result, within the assistant turn"],
    },
  };
}
