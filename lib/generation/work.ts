/**
 * Working one claimed generation (lib/generation/queue.ts claims it): its source conversations × repeats
 * sent to the target, the target's `max_concurrency` (or batch_size) at once, each result written as a
 * conversation of the generation's dataset while the claim is still this process's. A generation taken
 * up again (its process died or shut down) skips what its dataset already holds and counts it from there.
 * How it stops: cancelled (any process; nothing more is written), given back at shutdown (in-flight
 * conversations get the grace period, the rest is another process's), or its claim lost (it stops at once).
 * Its budget is a BudgetMeter (lib/jobs): each call's start is recorded on the row before the call goes out,
 * so a process taking up a generation whose process died counts the calls that process had out.
 */
import "server-only";
import pLimit from "p-limit";
import { getConversationTrees } from "@/db/repositories/datasets";
import { writeConversations } from "@/db/repositories/conversation-writes";
import { orderBySource } from "@/db/repositories/generation-order";
import { finishGeneration, releaseGeneration, saveGenerationProgress, whileHeld, writtenConversations } from "@/db/repositories/generation-queue";
import type { GenerationRow } from "@/db/repositories/targets";
import { transaction } from "@/db/store";
import { costOf } from "@/lib/judge/config";
import { LocalBudgetMeter } from "@/lib/jobs";
import { log } from "@/lib/log";
import { createGenerationBody, stopReasons, type CreateGenerationInput, type Generation } from "@/lib/schemas/generations";
import { getTargetRow } from "@/lib/targets";
import { announceGeneration } from "./events";
import { BudgetReached, nextTurn, replay, simulate, type CallKind, type Made, type ModeInput, type StopReason, type Usage } from "./modes";

export type StopKind = "cancel" | "drain" | "lost";
/** How the queue tells a generation to stop: `stop` aborts its calls; `draining` only stops new conversations. */
export type WorkControl = { signal: AbortSignal; stopKind: () => StopKind | null; draining: () => boolean };

export const emptyReasons = () => Object.fromEntries(stopReasons.map((r) => [r, 0])) as Record<StopReason, number>;
type WireUsage = Generation["usage"];

/** Calls started and not yet ended, as the row keeps them beside the usage (not on the wire). */
type InFlight = Record<CallKind, number>;
type StoredUsage = WireUsage & { in_flight?: Partial<InFlight> };

/** Saved usage (the wire's shape), tolerant of rows written before it was kept. */
export function savedUsage(u: Record<string, unknown> | null): WireUsage {
  const w = (u ?? {}) as Partial<WireUsage>;
  return {
    target_calls: w.target_calls ?? 0, simulator_calls: w.simulator_calls ?? 0, input_tokens: w.input_tokens ?? 0, output_tokens: w.output_tokens ?? 0,
    cost_usd: w.cost_usd === undefined ? 0 : w.cost_usd, lost_calls: w.lost_calls ?? 0,
  };
}

/**
 * The usage a generation is taken up with: what earlier attempts saved, and the calls the last one had out
 * when its process stopped — sent, so counted as calls (and in lost_calls); their replies, tokens and cost never came.
 */
function resumedUsage(u: Record<string, unknown> | null): WireUsage {
  const saved = savedUsage(u);
  const out = ((u ?? {}) as StoredUsage).in_flight ?? {};
  const target = out.target ?? 0;
  const simulator = out.simulator ?? 0;
  return { ...saved, target_calls: saved.target_calls + target, simulator_calls: saved.simulator_calls + simulator, lost_calls: saved.lost_calls + target + simulator };
}

/** This attempt's calls priced (JUDGE_PRICES), added to what earlier attempts saved. */
function usageWire(base: WireUsage, usage: Usage): WireUsage {
  let cost: number | null = base.cost_usd;
  for (const c of usage.calls) {
    if (c.inputTokens + c.outputTokens === 0) continue;
    const one = costOf(c.model ?? "", c.inputTokens, c.outputTokens);
    cost = one === null || cost === null ? null : cost + one;
  }
  return {
    target_calls: base.target_calls + usage.targetCalls,
    simulator_calls: base.simulator_calls + usage.simulatorCalls,
    input_tokens: base.input_tokens + usage.calls.reduce((n, c) => n + c.inputTokens, 0),
    output_tokens: base.output_tokens + usage.calls.reduce((n, c) => n + c.outputTokens, 0),
    cost_usd: cost,
    lost_calls: base.lost_calls,
  };
}

/** The request a generation was created with, read back from its row (params keep every field the work needs). */
export function requestOf(row: GenerationRow): CreateGenerationInput {
  const p = row.params;
  return createGenerationBody.parse({
    source_dataset_id: row.sourceDatasetId ?? 1,
    target_id: row.targetId ?? 1,
    mode: row.mode,
    repeats: p.repeats ?? 1,
    max_turns: p.max_turns ?? 10,
    simulator: p.simulator ?? undefined,
    seed: p.seed ?? undefined,
    batch_size: p.batch_size ?? undefined,
    max_cost_usd: p.max_cost_usd ?? undefined,
  });
}

/** What a generation stopped by its max_cost_usd says in `error` (its wire `stop_reason` is then `budget`). */
export const BUDGET_PREFIX = "budget reached:";
function budgetMessage(spentUsd: number | null, limitUsd: number, cutShort: number, notStarted: number): string {
  const spent = spentUsd === null ? "" : ` $${spentUsd.toFixed(4)} spent of`;
  return `${BUDGET_PREFIX}${spent} max_cost_usd $${limitUsd}; no call was started after it. ` +
    `${cutShort} conversation(s) stopped mid-way were not written (their calls are counted in usage), ${notStarted} not started`;
}

const failed = (r: StopReason) => r === "target_error" || r === "simulator_error";

/** Work a generation this process has claimed, until it ends, is cancelled, given back or lost. */
export async function workGeneration(row: GenerationRow, owner: string, control: WorkControl): Promise<void> {
  if (row.targetId === null) throw new Error("its target was deleted");
  if (row.sourceDatasetId === null) throw new Error("its source dataset was deleted");
  const body = requestOf(row);
  const target = await getTargetRow(row.targetId);
  const ids = row.sourceConversationIds ?? (Array.isArray(row.params.conversation_ids) ? (row.params.conversation_ids as number[]) : []);
  const base = resumedUsage(row.usage);
  const usage: Usage = { targetCalls: 0, simulatorCalls: 0, calls: [] };
  const reasons = emptyReasons();
  let completed = 0;
  let failedCount = 0;
  // Taken up again: what the dataset holds is done, and counted from its meta.
  const done = new Set<string>();
  for (const c of await writtenConversations(row.datasetId)) {
    done.add(`${c.sourceConversationId}:${c.repeat}`);
    const reason = (stopReasons as readonly string[]).includes(c.stopReason ?? "") ? (c.stopReason as StopReason) : "end_of_source";
    reasons[reason]++;
    if (failed(reason)) failedCount++;
    else completed++;
  }
  // The budget: the cost so far (earlier attempts' and this one's calls, each priced once as it lands),
  // asked before every call to the target or the simulator, so max_cost_usd stops new calls at once and
  // the spend ends within the calls already in flight (each conversation has at most one out).
  const meter = new LocalBudgetMeter(body.max_cost_usd ?? null, base.cost_usd);
  // Calls are saved as ended (answered or not) or in flight, so that a process taking the generation up
  // after this one died adds exactly the calls it had out.
  const inFlight: InFlight = { target: 0, simulator: 0 };
  const ended: InFlight = { target: 0, simulator: 0 };
  const progress = () => ({
    completed,
    failed: failedCount,
    usage: { ...usageWire(base, usage), target_calls: base.target_calls + ended.target, simulator_calls: base.simulator_calls + ended.simulator, in_flight: { ...inFlight } } satisfies StoredUsage,
    stopReasons: reasons,
  });
  let priced = 0;
  const callEnded = (kind: CallKind) => {
    for (; priced < usage.calls.length; priced++) {
      const c = usage.calls[priced];
      if (c.inputTokens + c.outputTokens > 0) meter.landed(costOf(c.model ?? "", c.inputTokens, c.outputTokens));
    }
    inFlight[kind]--;
    ended[kind]++;
    meter.settle();
    void saveProgress();
  };
  // A call goes out once its start is saved: a process that dies with it out leaves it counted.
  const beforeCall = async (kind: CallKind): Promise<boolean> => {
    if (!meter.mayStart()) return false;
    inFlight[kind]++;
    await saveProgress();
    return true;
  };
  let cutShort = 0;
  let notStarted = 0;
  // Progress is saved as each call ends, not only when a conversation is written: a process that dies
  // mid-conversation leaves its answered calls counted (only those still out at that moment are not),
  // and a generation taken up again adds its own to them. One save at a time, each of the latest
  // counts, so a later save never lands under an earlier one; calls ending meanwhile share the next.
  let saving: Promise<void> | null = null;
  let saveAgain = false;
  const saveProgress = (): Promise<void> => {
    if (saving) {
      saveAgain = true;
      return saving;
    }
    saving = (async () => {
      do {
        saveAgain = false;
        await saveGenerationProgress(row.id, owner, progress()).catch((err: unknown) => log.warn("generation: progress not saved", { generation_id: row.id, err }));
      } while (saveAgain);
    })().finally(() => {
      saving = null;
    });
    return saving;
  };
  const limit = pLimit(Math.min(target.maxConcurrency, body.batch_size ?? target.maxConcurrency));
  const mode = body.mode === "next_turn" ? nextTurn : body.mode === "replay" ? replay : simulate;
  const { signal } = control;
  let leftUndone = 0;
  const one = async (conversationId: number, repeat: number) => {
    if (meter.reached) return void notStarted++;
    if (signal.aborted || control.draining()) return void leftUndone++;
    const source = (await getConversationTrees([conversationId])).get(conversationId);
    if (!source) return;
    const input: ModeInput = {
      source, target, repeat, generationId: row.id, signal, usage, callEnded, beforeCall,
      maxTurns: body.max_turns, simulator: body.simulator, seed: body.seed === undefined ? undefined : body.seed + repeat,
    };
    let made: Made;
    try {
      made = await mode(input);
    } catch (error) {
      if (signal.aborted) return void leftUndone++;
      // Stopped before a call by the budget: not written (a conversation cut short by the budget is no
      // result of the target), its calls counted in usage.
      if (error instanceof BudgetReached) return void cutShort++;
      throw error;
    }
    if (signal.aborted) return void leftUndone++;
    // Written under the dataset's row lock, one at a time, only while the claim is ours and the generation runs.
    const now = new Date().toISOString();
    const written = await transaction(function* () {
      if (!(yield* whileHeld(row.id, row.datasetId, owner))) return false;
      yield* writeConversations(row.datasetId, [{ conversation: made.conversation }], now);
      return true;
    });
    if (!written) return;
    reasons[made.stopReason]++;
    if (failed(made.stopReason)) failedCount++;
    else completed++;
    await saveProgress();
    announceGeneration(row.id);
  };
  const tasks: Array<Promise<void>> = [];
  for (let repeat = 0; repeat < body.repeats; repeat++) {
    for (const id of ids) if (!done.has(`${id}:${repeat}`)) tasks.push(limit(() => one(id, repeat)));
  }
  await Promise.all(tasks);
  await saving;
  const stop = control.stopKind();
  if (stop === "lost") return;
  if (stop === "drain" || (control.draining() && leftUndone > 0 && stop !== "cancel")) {
    // Given back with its progress: another process (or this one after a restart) takes it up.
    await saveGenerationProgress(row.id, owner, progress());
    await releaseGeneration(row.id, owner);
    return;
  }
  // Listed in source order from here on (the grid, exports, the gate), not in the order they finished.
  if (row.sourceDatasetId !== null) {
    const sourceId = row.sourceDatasetId;
    await transaction(function* () {
      if (yield* whileHeld(row.id, row.datasetId, owner)) yield* orderBySource(row.datasetId, sourceId);
    });
  }
  const budgetReached = meter.reached;
  const status = stop === "cancel" || budgetReached ? "cancelled" : failedCount > 0 && completed === 0 ? "failed" : "completed";
  const error = budgetReached ? budgetMessage(progress().usage.cost_usd, body.max_cost_usd!, cutShort, notStarted) : stop === "cancel" ? "cancelled" : null;
  await finishGeneration(row.id, owner, { ...progress(), status, error, finishedAt: new Date().toISOString() });
  announceGeneration(row.id);
}
