/**
 * The three ways a generation makes a conversation from a source one (issue 37), each an ordinary
 * conversation in the shape of lib/conversation.ts: `next_turn` (each assistant turn re-answered from the
 * source's history, the original kept in the message's meta), `replay` (the source's user turns sent one
 * after another; `diverged_at` where the target's tool calls first differ from the source's) and
 * `simulate` (a model plays the user from a scenario until it says the stop token or `max_turns`).
 * A target's failure ends the conversation with `target_error`; a simulator's with `simulator_error`.
 */
import { conversationLabel } from "@/lib/conversation-label";
import type { Conversation, Message, Step } from "@/lib/conversation";
import type { StoredConversationTree } from "@/db/repositories/datasets";
import type { TargetRow } from "@/db/repositories/targets";
import { getJudgeConfig, resolveModelName } from "@/lib/judge/config";
import { callTarget, TargetError, type DeclaredTool, type TargetReply, type Turn } from "@/lib/targets";
import { chatCall, chatModel } from "@/lib/targets/chat";
import { valueAt } from "@/lib/targets/clients";
import type { stopReasons } from "@/lib/schemas/generations";
import { isRecord } from "@/lib/vocabulary";

export type StopReason = (typeof stopReasons)[number];
export type CallKind = "target" | "simulator";
export type Usage = { targetCalls: number; simulatorCalls: number; calls: Array<{ model: string | null; inputTokens: number; outputTokens: number }> };
export type Made = { conversation: Conversation; stopReason: StopReason; error: string | null };
export type ModeInput = {
  source: StoredConversationTree;
  target: TargetRow;
  repeat: number;
  generationId: number;
  signal: AbortSignal;
  usage: Usage;
  /** Told after each call to the target or the simulator ends (answered or not), its usage counted. */
  callEnded?: (kind: CallKind) => void;
  /**
   * Asked before each call to the target or the simulator; resolves once the call may go out (its start
   * recorded), false to stop the conversation there (it throws {@link BudgetReached}): a generation's
   * max_cost_usd stops new calls, not only new conversations.
   */
  beforeCall?: (kind: CallKind) => Promise<boolean>;
  maxTurns: number;
  simulator: { model?: string; scenario_path?: string; persona?: string; stop_token: string };
  seed?: number;
};

class SimulatorError extends Error {}

/** A conversation stopped before its next call because the generation's max_cost_usd was reached. */
export class BudgetReached extends Error {
  override name = "BudgetReached";
}

async function mayCall(input: ModeInput, kind: CallKind): Promise<void> {
  if (input.beforeCall && !(await input.beforeCall(kind))) throw new BudgetReached("budget reached before the next call");
}

const text = (m: { content: string | null }) => m.content ?? "";

/** What the source's agents declare as tools, for a target that takes tools (openai_chat). */
export function declaredTools(agents: unknown): DeclaredTool[] {
  const out = new Map<string, DeclaredTool>();
  for (const agent of Array.isArray(agents) ? agents : []) {
    const tools = isRecord(agent) ? agent.tools : undefined;
    const list = Array.isArray(tools) ? tools : isRecord(tools) ? Object.entries(tools).map(([name, t]) => ({ name, ...(isRecord(t) ? t : {}) })) : [];
    for (const t of list) {
      if (!isRecord(t) || typeof t.name !== "string" || out.has(t.name)) continue;
      const params = isRecord(t.parameters) && t.parameters.type === "object" ? t.parameters : { type: "object", properties: {}, additionalProperties: true };
      out.set(t.name, { name: t.name, description: typeof t.description === "string" ? t.description : undefined, parameters: params });
    }
  }
  return [...out.values()];
}

/** The history a target is sent from source messages: no tool messages, no empty ones (the dry run counts the same). */
export function asTurns(messages: StoredConversationTree["messages"]): Turn[] {
  return messages.filter((m) => m.role !== "tool" && text(m).trim() !== "").map((m) => ({ role: m.role === "system" ? "system" : m.role === "user" ? "user" : "assistant", content: text(m) }));
}

const replyMessage = (reply: TargetReply, meta: Record<string, unknown> = {}): Message => ({
  role: "assistant",
  content: reply.text || null,
  meta: Object.keys(meta).length ? meta : null,
  steps: reply.steps.length ? reply.steps : reply.text ? [{ thinking: null, toolCall: null, toolResult: null, outputContent: reply.text, outputStructured: null, modelName: reply.model, agentName: null } as Step] : [],
});

async function ask(input: ModeInput, turns: Turn[], sessionId: string): Promise<TargetReply> {
  await mayCall(input, "target");
  input.usage.targetCalls++;
  try {
    const reply = await callTarget(input.target, { turns, sessionId, tools: declaredTools(input.source.conversation.agents), signal: input.signal, seed: input.seed });
    input.usage.calls.push({ model: reply.model, inputTokens: reply.inputTokens, outputTokens: reply.outputTokens });
    return reply;
  } finally {
    input.callEnded?.("target");
  }
}

const toolNames = (steps: readonly { toolCall: unknown }[]) => steps.map((s) => (isRecord(s.toolCall) && typeof s.toolCall.name === "string" ? s.toolCall.name : null)).filter(Boolean).join(",");

/**
 * A generated conversation's name (issue 51, names lost): what its source is called wherever it is listed
 * (its name, else its meta id such as `task_id 1 · trial 0`, else its first words: lib/conversation-label)
 * and which repeat it is, counted from 1 — `task_id 1 · trial 0 · repeat 2`, the same in the grid, the
 * generation's page, exports and the gate's reports. It was the source's name or "conversation <id>".
 */
export function generatedName(input: Pick<ModeInput, "source" | "repeat">): string {
  const c = input.source.conversation;
  const firstUser = input.source.messages.find((m) => m.role === "user")?.content ?? null;
  return `${conversationLabel({ name: c.name, position: c.position, meta: c.meta, firstUser })} · repeat ${input.repeat + 1}`;
}

function shell(input: ModeInput, messages: Message[], made: Omit<Made, "conversation">, extra: Record<string, unknown> = {}): Made {
  const c = input.source.conversation;
  return {
    ...made,
    conversation: {
      name: generatedName(input),
      description: c.description,
      agents: c.agents,
      meta: {
        source_conversation_id: c.id,
        repeat: input.repeat,
        generation_id: input.generationId,
        target: input.target.name,
        stop_reason: made.stopReason,
        ...(made.error ? { error: made.error } : {}),
        ...extra,
        source_meta: c.meta ?? null,
      },
      messages,
    },
  };
}

const sessionOf = (input: ModeInput) => `gen-${input.generationId}-${input.source.conversation.id}-${input.repeat}`;

export async function nextTurn(input: ModeInput): Promise<Made> {
  const messages: Message[] = [];
  const source = input.source.messages;
  for (let i = 0; i < source.length; i++) {
    const m = source[i];
    if (m.role !== "assistant") {
      messages.push({ role: m.role, content: m.content, meta: m.meta ?? null, steps: [] });
      continue;
    }
    try {
      const reply = await ask(input, asTurns(source.slice(0, i)), sessionOf(input));
      messages.push(replyMessage(reply, { source_message_id: m.id, original_content: m.content }));
    } catch (error) {
      if (!(error instanceof TargetError)) throw error;
      return shell(input, messages, { stopReason: "target_error", error: error.message });
    }
  }
  return shell(input, messages, { stopReason: "end_of_source", error: null });
}

export async function replay(input: ModeInput): Promise<Made> {
  const source = input.source.messages;
  const messages: Message[] = [];
  const turns: Turn[] = [];
  const system = source.find((m) => m.role === "system");
  if (system) {
    messages.push({ role: "system", content: system.content, meta: null, steps: [] });
    turns.push({ role: "system", content: text(system) });
  }
  const sourceAssistants = source.filter((m) => m.role === "assistant");
  let assistantIndex = 0;
  let divergedAt: number | null = null;
  for (const m of source.filter((x) => x.role === "user")) {
    messages.push({ role: "user", content: m.content, meta: null, steps: [] });
    turns.push({ role: "user", content: text(m) });
    let reply: TargetReply;
    try {
      reply = await ask(input, turns, sessionOf(input));
    } catch (error) {
      if (!(error instanceof TargetError)) throw error;
      return shell(input, messages, { stopReason: "target_error", error: error.message }, { diverged_at: divergedAt });
    }
    const original = sourceAssistants[assistantIndex];
    // The path leaves the source's where the tools the target calls differ from the ones the source's agent called.
    if (divergedAt === null && original && toolNames(reply.steps) !== toolNames(original.steps)) divergedAt = assistantIndex;
    messages.push(replyMessage(reply));
    turns.push({ role: "assistant", content: reply.text });
    assistantIndex++;
  }
  return shell(input, messages, { stopReason: "end_of_source", error: null }, { diverged_at: divergedAt });
}

/** The scenario the simulated user follows: the meta path, else the stored goal, else the first user message. */
export function scenarioOf(source: StoredConversationTree, path: string | undefined): string {
  if (path) {
    const found = valueAt({ meta: source.conversation.meta }, path);
    if (typeof found === "string" && found.trim()) return found;
    if (found !== undefined && found !== null) return JSON.stringify(found);
  }
  return source.conversation.goal ?? text(source.messages.find((m) => m.role === "user") ?? { content: null });
}

/** The simulator's instructions (shown with the generation and versioned by its params). */
export function simulatorInstructions(scenario: string, persona: string | undefined, stopToken: string): string {
  return [
    "You play the USER in a conversation with an AI assistant. Stay in character; never act as the assistant.",
    `Your scenario, which you know and the assistant does not:\n${scenario}`,
    persona ? `Your persona: ${persona}` : "",
    "Write only your next message to the assistant, as the user would. Reveal details of the scenario only when they are needed.",
    `When your goal has been met, or clearly cannot be met, reply with exactly ${stopToken} and nothing else.`,
  ]
    .filter(Boolean)
    .join("\n\n");
}

/** The simulator's first message to itself: sent before the history on every simulator call. */
export const SIMULATOR_START = "(The conversation starts now. Write your first message to the assistant.)";

async function simulatorTurn(input: ModeInput, system: string, history: Turn[]): Promise<string> {
  const config = getJudgeConfig();
  if (!config.configured) throw new SimulatorError("no simulator model configured: set OPENAI_BASE_URL or OPENAI_API_KEY");
  const model = resolveModelName(input.simulator.model);
  // The simulator sees the conversation from the user's side: the assistant's words are what it was told.
  const messages = history.length
    ? history.map((t) => ({ role: t.role === "assistant" ? ("user" as const) : ("assistant" as const), content: t.content }))
    : [{ role: "user" as const, content: SIMULATOR_START }];
  if (messages[0].role === "assistant") messages.unshift({ role: "user", content: SIMULATOR_START });
  await mayCall(input, "simulator");
  input.usage.simulatorCalls++;
  try {
    const res = await chatCall(chatModel(config.baseURL, config.apiKey ?? "not-needed", model, {}, "simulator"), {
      turns: [{ role: "system", content: system }, ...messages],
      signal: input.signal,
      timeoutMs: config.timeoutMs,
      retries: 2,
      seed: input.seed,
    });
    input.usage.calls.push({ model, inputTokens: res.inputTokens, outputTokens: res.outputTokens });
    return res.text;
  } catch (error) {
    if (input.signal.aborted) throw input.signal.reason;
    throw new SimulatorError(`simulator ${model}: ${((error as Error).message ?? String(error)).slice(0, 300)}`);
  } finally {
    input.callEnded?.("simulator");
  }
}

export async function simulate(input: ModeInput): Promise<Made> {
  const stop = input.simulator.stop_token;
  const scenario = scenarioOf(input.source, input.simulator.scenario_path);
  const system = simulatorInstructions(scenario, input.simulator.persona, stop);
  const messages: Message[] = [];
  const turns: Turn[] = [];
  const extra = { scenario, simulator_model: resolveModelName(input.simulator.model) };
  for (let turn = 0; turn < input.maxTurns; turn++) {
    let said: string;
    try {
      said = await simulatorTurn(input, system, turns);
    } catch (error) {
      if (!(error instanceof SimulatorError)) throw error;
      return shell(input, messages, { stopReason: "simulator_error", error: error.message }, extra);
    }
    const stopped = said.includes(stop);
    const userText = said.replaceAll(stop, "").trim();
    if (userText) {
      messages.push({ role: "user", content: userText, meta: null, steps: [] });
      turns.push({ role: "user", content: userText });
    }
    if (stopped || !userText) return shell(input, messages, { stopReason: "stop_token", error: null }, extra);
    let reply: TargetReply;
    try {
      reply = await ask(input, turns, sessionOf(input));
    } catch (error) {
      if (!(error instanceof TargetError)) throw error;
      return shell(input, messages, { stopReason: "target_error", error: error.message }, extra);
    }
    messages.push(replyMessage(reply));
    turns.push({ role: "assistant", content: reply.text || "(no text)" });
  }
  return shell(input, messages, { stopReason: "max_turns", error: null }, extra);
}
