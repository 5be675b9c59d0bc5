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
import { convertMessages } from "./turns";

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

/** Convert event streams (one per unit) to conversations. */
export function convertAgentEvents(runs: Array<{ value: unknown; events: Rec[]; path: string }>): Normalised {
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  const skipped: Record<string, number> = {};
  let total = 0;
  for (const run of runs) {
    total += run.events.length;
    const messages: Rec[] = [];
    const outcome: Rec = {};
    const errors: string[] = [];
    for (const e of run.events) {
      const args = isRecord(e.args) ? e.args : {};
      const meta = { event_id: e.id, timestamp: e.timestamp };
      if (typeof e.observation === "string") {
        if (e.observation === "agent_state_changed") {
          const state = isRecord(e.extras) ? e.extras.agent_state : undefined;
          if (typeof state === "string") outcome.agent_state = state;
          skipped.agent_state_changed = (skipped.agent_state_changed ?? 0) + 1;
          continue;
        }
        if (e.observation === "error") errors.push(String(e.content ?? e.message ?? ""));
        if (e.observation === "null" || (e.content === "" && e.cause === undefined)) {
          skipped[`observation/${e.observation}`] = (skipped[`observation/${e.observation}`] ?? 0) + 1;
          continue;
        }
        messages.push({ role: "tool", content: textOf(e.content) ?? textOf(e.message) ?? "", meta });
        continue;
      }
      const action = e.action as string;
      const thought = textOf(args.thought) ?? textOf(e.thought);
      if (action === "message" || action === "system") {
        const role = action === "system" ? "system" : e.source === "user" ? "user" : "assistant";
        messages.push({ role, content: textOf(args.content) ?? textOf(e.message) ?? "", thinking: role === "assistant" ? thought : undefined, meta });
        continue;
      }
      if (action === "change_agent_state" || e.source === "environment") {
        skipped[`action/${action}`] = (skipped[`action/${action}`] ?? 0) + 1;
        continue;
      }
      if (action === "finish") outcome.finish = args;
      if (action === "think") {
        messages.push({ role: "assistant", content: null, thinking: thought, meta });
        continue;
      }
      const tcm = isRecord(e.tool_call_metadata) ? e.tool_call_metadata : {};
      const { thought: _thought, ...callArgs } = args;
      const finalText = action === "finish" ? (textOf(args.final_thought) ?? textOf(args.message)) : undefined;
      messages.push({
        role: "assistant",
        content: finalText ?? null,
        thinking: thought,
        tool_calls: [{ id: tcm.tool_call_id, function: { name: textOf(tcm.function_name) ?? action, arguments: callArgs } }],
        meta,
      });
    }
    if (errors.length) outcome.errors = errors;
    const converted = convertMessages(messages);
    const container = isRecord(run.value) ? Object.fromEntries(Object.entries(run.value).filter(([k]) => k !== "events" && k !== "history")) : {};
    conversations.push({ meta: { ...container, outcome }, messages: converted.messages });
    sources.push({ path: run.path, messagesPath: run.path, rawMessages: run.events, wholeConversation: true });
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
