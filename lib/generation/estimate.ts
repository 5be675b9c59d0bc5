/**
 * What a generation would send, without sending anything (`dry_run`): its target and simulator calls,
 * their tokens estimated from the source conversations' text (the history each call carries, the
 * source's own replies as the length of an answer), priced with JUDGE_PRICES where the model has a price.
 */
import "server-only";
import { getConversationTrees, type StoredConversationTree } from "@/db/repositories/datasets";
import type { TargetRow } from "@/db/repositories/targets";
import { costOf, resolveModelName } from "@/lib/judge/config";
import { estimateTokens } from "@/lib/metrics/evidence";
import type { CreateGenerationInput, GenerationEstimate } from "@/lib/schemas/generations";
import { scenarioOf, simulatorInstructions } from "./modes";

type Part = { calls: number; input: number; output: number };

/** A turn of no known length (a simulated one beyond the source's) is taken as this many characters. */
const TURN_CHARS = 200;

const chars = (m: { content: string | null }) => (m.content ?? "").length;
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : TURN_CHARS);

function addCalls(tree: StoredConversationTree, body: CreateGenerationInput, target: Part, simulator: Part): void {
  const messages = tree.messages.filter((m) => m.role !== "tool");
  if (body.mode === "next_turn") {
    let before = 0;
    for (const m of messages) {
      if (m.role === "assistant") {
        target.calls++;
        target.input += before;
        target.output += chars(m);
      }
      before += chars(m);
    }
    return;
  }
  if (body.mode === "replay") {
    const replies = messages.filter((m) => m.role === "assistant").map(chars);
    let before = chars(messages.find((m) => m.role === "system") ?? { content: null });
    let k = 0;
    for (const m of messages.filter((x) => x.role === "user")) {
      const reply = replies[k++] ?? mean(replies);
      target.calls++;
      target.input += before + chars(m);
      target.output += reply;
      before += chars(m) + reply;
    }
    return;
  }
  // simulate: max_turns turns at most, each one simulator call then one target call, the history growing.
  const userTurn = mean(messages.filter((m) => m.role === "user").map(chars));
  const reply = mean(messages.filter((m) => m.role === "assistant").map(chars));
  const instructions = simulatorInstructions(scenarioOf(tree, body.simulator.scenario_path), body.simulator.persona, body.simulator.stop_token).length;
  let history = 0;
  for (let turn = 0; turn < body.max_turns; turn++) {
    simulator.calls++;
    simulator.input += instructions + history;
    simulator.output += userTurn;
    history += userTurn;
    target.calls++;
    target.input += history;
    target.output += reply;
    history += reply;
  }
}

function priced(model: string | null, part: Part, who: string, notes: string[]) {
  const input = estimateTokens(part.input);
  const output = estimateTokens(part.output);
  const cost = model ? costOf(model, input, output) : null;
  if (part.calls > 0 && cost === null) notes.push(model ? `${who} model ${model} has no price in JUDGE_PRICES: its cost is not counted` : `${who} names no model: its cost cannot be priced`);
  return { model, calls: part.calls, input_tokens: input, output_tokens: output, cost_usd: part.calls === 0 ? 0 : cost };
}

/** The calls, tokens and cost a generation would make over these source conversations. */
export async function estimateGeneration(body: CreateGenerationInput, target: TargetRow, ids: number[]): Promise<GenerationEstimate> {
  const trees = await getConversationTrees(ids);
  const t: Part = { calls: 0, input: 0, output: 0 };
  const s: Part = { calls: 0, input: 0, output: 0 };
  for (const tree of trees.values()) addCalls(tree, body, t, s);
  for (const part of [t, s]) for (const k of ["calls", "input", "output"] as const) part[k] *= body.repeats;
  const notes: string[] = [
    body.mode === "simulate"
      ? "simulate: an upper bound of max_turns calls each to the simulator and the target per conversation (fewer when the simulator says the stop token); tokens from the source's average turn"
      : "one target call per assistant turn (next_turn) or user turn (replay); tokens from the source's text (4 characters a token)",
  ];
  const targetPart = priced(target.model, t, `target ${target.name}'s`, notes);
  const simulatorPart = body.mode === "simulate" ? priced(resolveModelName(body.simulator.model), s, "the simulator's", notes) : null;
  const costs = [targetPart.cost_usd, simulatorPart ? simulatorPart.cost_usd : 0];
  return {
    conversations: ids.length * body.repeats,
    target_calls: t.calls,
    simulator_calls: s.calls,
    estimated_input_tokens: targetPart.input_tokens + (simulatorPart?.input_tokens ?? 0),
    estimated_output_tokens: targetPart.output_tokens + (simulatorPart?.output_tokens ?? 0),
    estimated_cost_usd: costs.some((c) => c === null) ? null : (costs as number[]).reduce((a, b) => a + b, 0),
    target: targetPart,
    simulator: simulatorPart,
    note: notes.join("; "),
    notes,
  };
}
