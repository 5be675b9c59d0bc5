/**
 * What a generation would send, without sending anything (`dry_run`): every call to the target and the
 * simulator built as the modes build it (lib/generation/modes.ts) — the whole history on every turn, the
 * conversation's system prompt, the tools an `openai_chat` target is told about, the simulator's
 * instructions and opening line on each of its calls — its tokens counted per call as a provider bills
 * them (4 characters a token, the rate of English prose and of the judge test double), and priced with
 * JUDGE_PRICES where the model has a price. What no dry run can know is how long the target (and the
 * simulator) will answer: `estimated_cost_usd` takes the source's own replies as their length, and
 * `estimated_cost_usd_high` every reply as long as the longest the source holds — a longer reply costs
 * twice, as output and again in the input of every later turn.
 */
import "server-only";
import { getConversationTrees, type StoredConversationTree } from "@/db/repositories/datasets";
import type { TargetRow } from "@/db/repositories/targets";
import { costOf, resolveModelName } from "@/lib/judge/config";
import type { CreateGenerationInput, GenerationEstimate } from "@/lib/schemas/generations";
import { asTurns, declaredTools, scenarioOf, SIMULATOR_START, simulatorInstructions } from "./modes";

/** Billed tokens (input and output) and calls of one side. */
type Part = { calls: number; input: number; output: number };
/** How long the target's replies and the simulated user's turns are taken to be. */
type Lengths = "source" | "longest";

/** Characters a token, as providers bill prose (and as the judge test double bills everything). */
export const BILLED_CHARS_PER_TOKEN = 4;
/** A turn of no known length (a simulated one beyond the source's, in a source without any) is taken as this many characters. */
const TURN_CHARS = 200;

const tokens = (chars: number) => Math.max(1, Math.ceil(chars / BILLED_CHARS_PER_TOKEN));
const chars = (m: { content: string | null }) => (m.content ?? "").length;
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : TURN_CHARS);
const max = (xs: number[]) => (xs.length ? Math.max(...xs) : TURN_CHARS);
/** The characters of one request's messages, as one text (a provider reads them one after another). */
const sent = (texts: number[]) => texts.reduce((a, b) => a + b, 0) + Math.max(0, texts.length - 1);

/** An answer's billed length: its text, and the tool calls it made. */
function answerChars(m: StoredConversationTree["messages"][number]): number {
  const calls = m.steps.map((s) => s.toolCall).filter((c) => c !== null && c !== undefined);
  return chars(m) + (calls.length ? JSON.stringify(calls).length : 0);
}

function addCalls(tree: StoredConversationTree, body: CreateGenerationInput, target: TargetRow, lengths: Lengths, longest: { reply: number; user: number }, t: Part, s: Part): void {
  // An openai_chat target is told about the source's agents' tools on every call, and bills them as input.
  const tools = target.kind === "openai_chat" ? declaredTools(tree.conversation.agents) : [];
  const toolChars = tools.length ? JSON.stringify(tools).length : 0;
  const targetCall = (history: number[], reply: number) => {
    t.calls++;
    t.input += tokens(sent(history) + toolChars);
    t.output += tokens(reply);
  };
  const source = tree.messages;
  if (body.mode === "next_turn") {
    // The history is the source's own; only the answer's length is a guess.
    for (let i = 0; i < source.length; i++) {
      if (source[i].role !== "assistant") continue;
      targetCall(asTurns(source.slice(0, i)).map((turn) => turn.content.length), lengths === "longest" ? longest.reply : answerChars(source[i]));
    }
    return;
  }
  if (body.mode === "replay") {
    const replies = source.filter((m) => m.role === "assistant");
    const history: number[] = [];
    const system = source.find((m) => m.role === "system");
    if (system) history.push(chars(system));
    let k = 0;
    for (const m of source.filter((x) => x.role === "user")) {
      history.push(chars(m));
      const reply = replies[k++];
      const text = lengths === "longest" ? longest.reply : reply ? chars(reply) : mean(replies.map(chars));
      targetCall(history, lengths === "longest" ? longest.reply : reply ? answerChars(reply) : text);
      // The reply's text is the next turn's history.
      history.push(text);
    }
    return;
  }
  // simulate: max_turns turns at most, each one simulator call then one target call, the history growing.
  const userTurn = lengths === "longest" ? longest.user : mean(source.filter((m) => m.role === "user").map(chars));
  const reply = lengths === "longest" ? longest.reply : mean(source.filter((m) => m.role === "assistant").map(chars));
  const instructions = simulatorInstructions(scenarioOf(tree, body.simulator.scenario_path), body.simulator.persona, body.simulator.stop_token).length;
  const history: number[] = [];
  for (let turn = 0; turn < body.max_turns; turn++) {
    s.calls++;
    s.input += tokens(sent([instructions, SIMULATOR_START.length, ...history]));
    s.output += tokens(userTurn);
    history.push(userTurn);
    targetCall(history, reply);
    history.push(reply);
  }
}

function cost(model: string | null, part: Part): number | null {
  if (part.calls === 0) return 0;
  return model ? costOf(model, part.input, part.output) : null;
}

function priced(model: string | null, part: Part, who: string, notes: string[]) {
  const c = cost(model, part);
  if (part.calls > 0 && c === null) notes.push(model ? `${who} model ${model} has no price in JUDGE_PRICES: its cost is not counted` : `${who} names no model: its cost cannot be priced`);
  return { model, calls: part.calls, input_tokens: part.input, output_tokens: part.output, cost_usd: c };
}

/** The calls, tokens and cost a generation would make over these source conversations. */
export async function estimateGeneration(body: CreateGenerationInput, target: TargetRow, ids: number[]): Promise<GenerationEstimate> {
  const trees = [...(await getConversationTrees(ids)).values()];
  const all = trees.flatMap((tree) => tree.messages);
  const longest = { reply: max(all.filter((m) => m.role === "assistant").map(chars)), user: max(all.filter((m) => m.role === "user").map(chars)) };
  const count = (lengths: Lengths) => {
    const t: Part = { calls: 0, input: 0, output: 0 };
    const s: Part = { calls: 0, input: 0, output: 0 };
    for (const tree of trees) addCalls(tree, body, target, lengths, longest, t, s);
    for (const part of [t, s]) for (const k of ["calls", "input", "output"] as const) part[k] *= body.repeats;
    return { t, s };
  };
  const { t, s } = count("source");
  const high = count("longest");
  const simulatorModel = body.mode === "simulate" ? resolveModelName(body.simulator.model) : null;
  const notes: string[] = [
    body.mode === "simulate"
      ? "simulate: an upper bound of max_turns calls each to the simulator and the target per conversation (fewer when the simulator says the stop token); each call carries the whole conversation so far, the simulator's instructions and opening line included; turns as long as the source's average"
      : `one target call per assistant turn (next_turn) or user turn (replay), each carrying the whole history before it${body.mode === "replay" ? " (the target's own earlier replies taken as long as the source's)" : ""}`,
    `tokens counted per call at ${BILLED_CHARS_PER_TOKEN} characters a token (prose; JSON and code run nearer 3), tool definitions included; providers add a few tokens per message`,
    "estimated_cost_usd_high: every reply as long as the longest the source holds — a target that answers at length pays for it again in every later turn's history",
  ];
  const targetPart = priced(target.model, t, `target ${target.name}'s`, notes);
  const simulatorPart = body.mode === "simulate" ? priced(simulatorModel, s, "the simulator's", notes) : null;
  const together = (parts: Array<number | null>) => (parts.some((c) => c === null) ? null : (parts as number[]).reduce((a, b) => a + b, 0));
  return {
    conversations: ids.length * body.repeats,
    target_calls: t.calls,
    simulator_calls: s.calls,
    estimated_input_tokens: targetPart.input_tokens + (simulatorPart?.input_tokens ?? 0),
    estimated_output_tokens: targetPart.output_tokens + (simulatorPart?.output_tokens ?? 0),
    estimated_cost_usd: together([targetPart.cost_usd, simulatorPart ? simulatorPart.cost_usd : 0]),
    estimated_cost_usd_high: together([cost(target.model, high.t), body.mode === "simulate" ? cost(simulatorModel, high.s) : 0]),
    target: targetPart,
    simulator: simulatorPart,
    note: notes.join("; "),
    notes,
  };
}
