/**
 * Generations (issue 37): a source dataset's conversations sent to a target, each result an ordinary
 * conversation of a new dataset linked to its source (`meta.source_conversation_id`, `repeat`,
 * `generation_id`, `target`, `stop_reason`), so every metric, check, label and export works on it. Worked
 * in the process that started it, the target's `max_concurrency` (or batch_size) conversations at once;
 * progress saved as each conversation is written and announced to followers (SSE); cancel stops every
 * call at once; `max_cost_usd` stops starting conversations once the target's and simulator's calls
 * (priced by JUDGE_PRICES) reach it.
 */
import "server-only";
import { EventEmitter } from "node:events";
import pLimit from "p-limit";
import { createDataset, getConversationTrees, getDataset } from "@/db/repositories/datasets";
import { writeConversations } from "@/db/repositories/conversation-writes";
import * as repo from "@/db/repositories/targets";
import { lockRow, transaction } from "@/db/store";
import { AppError, notFound } from "@/lib/errors";
import { costOf } from "@/lib/judge/config";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { stopReasons, type CreateGenerationInput, type Generation } from "@/lib/schemas/generations";
import { getTargetRow } from "@/lib/targets";
import { nextTurn, replay, simulate, simulatorInstructions, type Made, type ModeInput, type StopReason, type Usage } from "./modes";

type Active = { controller: AbortController; finished: Promise<void> };
const active = processSingleton("generation.active", () => new Map<number, Active>());
const bus = processSingleton("generation.events", () => {
  const e = new EventEmitter();
  e.setMaxListeners(0);
  return e;
});

export type GenerationEvent = { event: "conversation" | "processing" | "done"; data: unknown };

/** Follow a generation's events in this process; returns the unsubscribe. */
export function onGenerationEvent(id: number, listener: (e: GenerationEvent) => void): () => void {
  const channel = `g${id}`;
  bus.on(channel, listener);
  return () => bus.off(channel, listener);
}

function emit(id: number, e: GenerationEvent): void {
  bus.emit(`g${id}`, e);
}

const emptyReasons = () => Object.fromEntries(stopReasons.map((r) => [r, 0])) as Record<StopReason, number>;

function usageWire(u: Usage | Record<string, unknown> | null): Generation["usage"] {
  if (!u || !("calls" in u) || !Array.isArray(u.calls)) {
    const w = (u ?? {}) as Partial<Generation["usage"]>;
    return { target_calls: w.target_calls ?? 0, simulator_calls: w.simulator_calls ?? 0, input_tokens: w.input_tokens ?? 0, output_tokens: w.output_tokens ?? 0, cost_usd: w.cost_usd ?? 0 };
  }
  const usage = u as Usage;
  let cost: number | null = 0;
  for (const c of usage.calls) {
    if (c.inputTokens + c.outputTokens === 0) continue;
    const one = costOf(c.model ?? "", c.inputTokens, c.outputTokens);
    cost = one === null || cost === null ? null : cost + one;
  }
  return {
    target_calls: usage.targetCalls,
    simulator_calls: usage.simulatorCalls,
    input_tokens: usage.calls.reduce((n, c) => n + c.inputTokens, 0),
    output_tokens: usage.calls.reduce((n, c) => n + c.outputTokens, 0),
    cost_usd: cost,
  };
}

export function toGenerationWire(g: repo.GenerationRow): Generation {
  return {
    id: g.id,
    dataset_id: g.datasetId,
    source_dataset_id: g.sourceDatasetId,
    target_id: g.targetId,
    mode: g.mode,
    status: g.status,
    total: g.total,
    completed: g.completed,
    failed: g.failed,
    usage: usageWire(g.usage),
    stop_reasons: { ...emptyReasons(), ...(g.stopReasons ?? {}) },
    error: g.error,
    params: g.params,
    created_at: g.createdAt,
    started_at: g.startedAt,
    finished_at: g.finishedAt,
  };
}

export async function getGeneration(id: number): Promise<Generation> {
  const g = await repo.getGeneration(id);
  if (!g) throw notFound("Generation", id);
  return toGenerationWire(g);
}

/** What a generation would send, without sending anything (`dry_run`). */
async function estimate(body: CreateGenerationInput, ids: number[]) {
  const trees = await getConversationTrees(ids);
  let targetCalls = 0;
  let simulatorCalls = 0;
  for (const t of trees.values()) {
    const assistants = t.messages.filter((m) => m.role === "assistant").length;
    const users = t.messages.filter((m) => m.role === "user").length;
    if (body.mode === "next_turn") targetCalls += assistants;
    else if (body.mode === "replay") targetCalls += users;
    else {
      targetCalls += body.max_turns;
      simulatorCalls += body.max_turns;
    }
  }
  return {
    conversations: ids.length * body.repeats,
    target_calls: targetCalls * body.repeats,
    simulator_calls: simulatorCalls * body.repeats,
    note: body.mode === "simulate" ? "simulate: at most max_turns calls each to the simulator and the target per conversation (fewer when the simulator says the stop token)" : "one target call per assistant turn (next_turn) or user turn (replay)",
  };
}

/** Start a generation (202 at once; the work goes on in this process), or price it (`dry_run`). */
export async function startGeneration(body: CreateGenerationInput, userId: string): Promise<{ dryRun: true; estimate: Awaited<ReturnType<typeof estimate>> } | { dryRun: false; generation: Generation }> {
  if (body.filter !== undefined) throw new AppError("unprocessable", "filter is not supported by generations yet: name the conversations in conversation_ids", [{ path: "filter", message: "not supported yet" }]);
  const source = await getDataset({ id: body.source_dataset_id });
  if (!source) throw notFound("Dataset", body.source_dataset_id);
  const target = await getTargetRow(body.target_id);
  const ids = await repo.sourceConversationIds(source.id, body.conversation_ids);
  if (body.conversation_ids && ids.length !== new Set(body.conversation_ids).size) {
    throw new AppError("unprocessable", `Some conversation_ids are not conversations of dataset ${source.id}`, [{ path: "conversation_ids", message: `must be conversations of dataset ${source.id}` }]);
  }
  if (ids.length === 0) throw new AppError("unprocessable", `Dataset ${source.id} has no conversations to generate from`, [{ path: "source_dataset_id", message: "has no conversations" }]);
  if (body.dry_run) return { dryRun: true, estimate: await estimate(body, ids) };

  const dataset = await createDataset({ name: body.name ?? `${source.name} · ${target.name} · ${body.mode}`, description: `Generated by ${body.mode} against target ${target.name} from dataset ${source.id}`, userId });
  const params = {
    conversation_ids: body.conversation_ids ?? null,
    repeats: body.repeats,
    max_turns: body.max_turns,
    simulator: body.simulator,
    ...(body.mode === "simulate" ? { simulator_instructions: simulatorInstructions("<scenario>", body.simulator.persona, body.simulator.stop_token), simulator_version: 1 } : {}),
    seed: body.seed ?? null,
    batch_size: body.batch_size ?? null,
    max_cost_usd: body.max_cost_usd ?? null,
    target: { id: target.id, name: target.name, kind: target.kind, model: target.model },
  };
  const row = await repo.insertGeneration({ userId, sourceDatasetId: source.id, datasetId: dataset.id, targetId: target.id, mode: body.mode, params, total: ids.length * body.repeats });
  const controller = new AbortController();
  const finished = new Promise<void>((resolve) =>
    setImmediate(() => {
      work(row, body, ids, controller.signal)
        .catch(async (error: unknown) => {
          log.error("generation failed", { generation_id: row.id, error });
          await repo.saveGenerationState(row.id, { status: "failed", completed: 0, failed: 0, usage: null, stopReasons: emptyReasons(), error: `generation stopped: ${(error as Error).message}`, finishedAt: new Date().toISOString() });
        })
        .finally(() => {
          active.delete(row.id);
          resolve();
        });
    }),
  );
  active.set(row.id, { controller, finished });
  return { dryRun: false, generation: toGenerationWire(row) };
}

async function work(row: repo.GenerationRow, body: CreateGenerationInput, ids: number[], signal: AbortSignal): Promise<void> {
  const target = await getTargetRow(body.target_id);
  const startedAt = new Date().toISOString();
  const usage: Usage = { targetCalls: 0, simulatorCalls: 0, calls: [] };
  const reasons = emptyReasons();
  let completed = 0;
  let failed = 0;
  let budgetReached = false;
  const save = (status: repo.GenerationRow["status"], extra: { error?: string; finishedAt?: string } = {}) =>
    repo.saveGenerationState(row.id, { status, completed, failed, usage: usageWire(usage), stopReasons: reasons, startedAt, ...extra });
  await save("processing");
  const limit = pLimit(Math.min(target.maxConcurrency, body.batch_size ?? target.maxConcurrency));
  const mode = body.mode === "next_turn" ? nextTurn : body.mode === "replay" ? replay : simulate;
  // Writes one after another: each takes the new dataset's row lock and numbers its conversation next.
  let writes = Promise.resolve();
  const one = async (conversationId: number, repeat: number) => {
    if (signal.aborted || budgetReached) return;
    const source = (await getConversationTrees([conversationId])).get(conversationId);
    if (!source) return;
    const input: ModeInput = { source, target, repeat, generationId: row.id, signal, usage, maxTurns: body.max_turns, simulator: body.simulator, seed: body.seed === undefined ? undefined : body.seed + repeat };
    let made: Made;
    try {
      made = await mode(input);
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
    if (signal.aborted) return;
    const written = (writes = writes.then(async () => {
      const now = new Date().toISOString();
      const result = await transaction(function* () {
        yield* lockRow("datasets", row.datasetId);
        return yield* writeConversations(row.datasetId, [{ conversation: made.conversation }], now);
      });
      reasons[made.stopReason]++;
      if (made.stopReason === "target_error" || made.stopReason === "simulator_error") failed++;
      else completed++;
      await save("processing");
      emit(row.id, { event: "conversation", data: { generation_id: row.id, conversation_id: result.conversationIds[0], source_conversation_id: conversationId, repeat, stop_reason: made.stopReason, error: made.error } });
      emit(row.id, { event: "processing", data: { generation_id: row.id, completed, failed, total: row.total } });
      const cost = usageWire(usage).cost_usd;
      if (body.max_cost_usd !== undefined && cost !== null && cost >= body.max_cost_usd) budgetReached = true;
    }));
    await written;
  };
  const tasks: Array<Promise<void>> = [];
  for (let repeat = 0; repeat < body.repeats; repeat++) for (const id of ids) tasks.push(limit(() => one(id, repeat)));
  await Promise.all(tasks);
  await writes;
  const finishedAt = new Date().toISOString();
  const status = signal.aborted || budgetReached ? "cancelled" : failed > 0 && completed === 0 ? "failed" : "completed";
  await save(status, { finishedAt, ...(budgetReached ? { error: `budget reached: max_cost_usd ${body.max_cost_usd}; the conversations not started were not generated` } : signal.aborted ? { error: "cancelled" } : {}) });
  emit(row.id, { event: "done", data: await getGeneration(row.id) });
}

/** Cancel a running generation: its calls are aborted at once and nothing more is written. */
export async function cancelGeneration(id: number): Promise<Generation> {
  const g = await repo.getGeneration(id);
  if (!g) throw notFound("Generation", id);
  if (!["pending", "processing"].includes(g.status)) throw new AppError("conflict", `Generation ${id} is already ${g.status}`);
  const run = active.get(id);
  if (run) {
    run.controller.abort(new Error("cancelled"));
    await Promise.race([run.finished, new Promise((r) => setTimeout(r, 10_000))]);
  } else {
    await repo.saveGenerationState(id, { status: "cancelled", completed: g.completed, failed: g.failed, usage: g.usage, stopReasons: g.stopReasons, error: "cancelled (no process was working it)", finishedAt: new Date().toISOString() });
  }
  return getGeneration(id);
}

/** Wait for a generation of this process to end (tests). */
export async function waitForGeneration(id: number): Promise<void> {
  await active.get(id)?.finished;
}
