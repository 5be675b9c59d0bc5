/**
 * The online sweep: for each enabled rule, take the dataset's live conversations that finished (no new
 * span for the rule's idle_seconds) and were not taken at their current revision yet — one claiming
 * statement, so each revision is taken once across processes — keep the sampled ones that match the
 * rule's filter, and evaluate them with one ordinary run (`meta.trigger: "rule:<id>"`; on PostgreSQL
 * through the queue like every run). A rule has one run going at a time; its daily budget is the run's
 * max_cost_usd. Each server process sweeps every ONLINE_SWEEP_INTERVAL_MS; a lease on the rule keeps
 * two processes from sweeping one rule at once: lib/jobs's length, renewed by lib/jobs while the rule's
 * sweep goes on (a slow sweep is not taken over), and a sweep whose lease was taken over (its process
 * stalled past it) starts no run.
 */
import "server-only";
import { createHash } from "node:crypto";
import { conversationIdsMatching } from "@/db/repositories/grid";
import * as repo from "@/db/repositories/online";
import type { OnlineRuleRow } from "@/db/schema";
import { getConfig } from "@/lib/config";
import { definePeriodic, holdLease, leaseMs, stopLease } from "@/lib/jobs";
import { log } from "@/lib/log";
import { inboxCaughtUp } from "@/lib/otel/inbox";
import { parseGridExtras } from "@/lib/results/grid";
import { startExecution, type RunnerDeps } from "@/lib/runner";
import { spentToday } from "./rules";

/** Conversations claimed per rule per sweep: one run evaluates at most these. */
export const SWEEP_BATCH = 200;
/** How long a sweep waits for the trace inbox to store what it holds (lib/otel/inbox.ts) before it skips its turn. */
const INBOX_WAIT_MS = 30_000;
/** The watermark is read back this far, for exports whose transaction committed after a later one. */
const WATERMARK_MARGIN_MS = 5 * 60_000;

/** Whether the rule evaluates this conversation: a hash of both, so every sweep (and process) decides the same. */
export function sampledFor(ruleId: number, otelConversationId: number, rate: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  const h = createHash("sha256").update(`${ruleId}:${otelConversationId}`).digest().readUInt32BE(0);
  return h / 2 ** 32 < rate;
}

export type RuleSweep = { ruleId: number; claimed: number; evaluated: number; executionId: number | null; skipped?: "busy" | "running" | "budget" | "error" };

export type SweepOptions = { now?: Date; deps?: RunnerDeps };

/** One pass over every enabled rule. `now`: the clock (tests); `deps`: the runner's (tests' judge). */
export async function sweepOnlineRules(opts: SweepOptions = {}): Promise<RuleSweep[]> {
  const out: RuleSweep[] = [];
  // Exports answered but not stored yet (the trace inbox) may be a conversation's latest turns: stored first.
  if (!(await inboxCaughtUp(INBOX_WAIT_MS))) {
    log.warn("online sweep skipped: the trace inbox is still storing the exports received before it");
    return out;
  }
  for (const rule of await repo.listRules({ enabledOnly: true })) out.push(await sweepRule(rule, opts));
  return out;
}

async function sweepRule(ruleAtStart: OnlineRuleRow, opts: SweepOptions): Promise<RuleSweep> {
  let rule = ruleAtStart;
  const now = opts.now ?? new Date();
  const result: RuleSweep = { ruleId: rule.id, claimed: 0, evaluated: 0, executionId: null };
  // How long a process may hold a rule's sweep before another takes it (a process that died holding it).
  const lease = leaseMs();
  if (!(await repo.takeSweepLease(rule.id, now, lease))) return { ...result, skipped: "busy" };
  let held = new Date(now.getTime() + lease).toISOString();
  let lost = false;
  const key = `online rule ${rule.id}`;
  holdLease(
    key,
    async (until) => {
      const kept = await repo.renewSweepLease(rule.id, held, until);
      if (kept) held = until;
      return kept;
    },
    () => void (lost = true),
  );
  let sweptUntil: string | undefined;
  try {
    // One run at a time: the next sweep takes what finished meanwhile, and a daily budget holds.
    if (await repo.ruleHasActiveRun(rule.id)) return { ...result, skipped: "running" };
    // What a run stopped by the budget never reached goes back to be claimed again (and is no longer counted as evaluated).
    if (await repo.releaseUnevaluatedOfBudgetStops(rule.id)) rule = (await repo.getRule(rule.id)) ?? rule;
    const spent = rule.maxCostUsdPerDay === null ? 0 : await spentToday(rule.id, now);
    if (rule.maxCostUsdPerDay !== null && spent >= rule.maxCostUsdPerDay) return { ...result, skipped: "budget" };

    const finishedBy = new Date(now.getTime() - rule.idleSeconds * 1000).toISOString();
    const after = rule.sweptUntil ? new Date(Date.parse(rule.sweptUntil) - WATERMARK_MARGIN_MS).toISOString() : "";
    const claimed = await repo.claimFinishedConversations(rule.id, rule.datasetId, {
      after,
      finishedBy,
      now: now.toISOString(),
      // A claim left undecided for longer than a lease: its sweep's process died before its run started.
      staleBefore: new Date(now.getTime() - lease).toISOString(),
      limit: SWEEP_BATCH,
    });
    result.claimed = claimed.length;
    if (claimed.length < SWEEP_BATCH) {
      // Everything finished by now was considered, except conversations still waiting for their rebuild.
      const waiting = await repo.oldestUnassembled(rule.datasetId);
      sweptUntil = waiting && waiting < finishedBy ? waiting : finishedBy;
    }
    if (claimed.length === 0) return result;

    let chosen = claimed.filter((c) => sampledFor(rule.id, c.otelConversationId, rule.sampleRate));
    try {
      if (rule.filter && chosen.length) {
        const extras = await parseGridExtras(rule.datasetId, { level: "conversation", filter: rule.filter, limit: 1, offset: 0 });
        const matching = new Set(extras ? await conversationIdsMatching(rule.datasetId, chosen.map((c) => c.conversationId), extras) : chosen.map((c) => c.conversationId));
        chosen = chosen.filter((c) => matching.has(c.conversationId));
      }
      const chosenIds = new Set(chosen.map((c) => c.otelConversationId));
      await repo.markTaken(rule.id, claimed.filter((c) => !chosenIds.has(c.otelConversationId)).map((c) => c.otelConversationId), null, now.toISOString());
      if (chosen.length === 0) return result;
      // Another process took the rule's sweep over while this one stalled: it may start a run of its own.
      if (lost) throw new Error("this sweep of the rule stalled past its lease and another process took it over; the conversations are taken again by a later sweep");
      const execution = await startExecution(
        {
          dataset_id: rule.datasetId,
          conversation_ids: [...new Set(chosen.map((c) => c.conversationId))],
          pipeline_node_ids: rule.pipelineNodeIds,
          execution_mode: "async",
          batch_size: 8,
          retry: false,
          no_cache: false,
          model_name: null,
          max_cost_usd: rule.maxCostUsdPerDay === null ? null : rule.maxCostUsdPerDay - spent,
        },
        rule.userId,
        opts.deps,
        { trigger: `rule:${rule.id}` },
      );
      await repo.markTaken(rule.id, [...chosenIds], execution.id, now.toISOString());
      await repo.recordRuleRun(rule.id, execution.id, chosen.length, now.toISOString());
      return { ...result, evaluated: chosen.length, executionId: execution.id };
    } catch (error) {
      // The run could not start (a metric deleted, the server draining): the conversations are given
      // back and taken again by a later sweep; the reason shows on the rule.
      await repo.releaseClaims(rule.id, claimed.map((c) => c.otelConversationId));
      sweptUntil = undefined;
      await repo.recordRuleError(rule.id, (error as Error).message, now.toISOString());
      return { ...result, skipped: "error" };
    }
  } finally {
    await stopLease(key);
    // A lease taken over is the other process's to give back.
    if (!lost) await repo.releaseSweepLease(rule.id, sweptUntil);
  }
}

const loop = definePeriodic("online.sweep", {
  everyMs: () => getConfig().ONLINE_SWEEP_INTERVAL_MS,
  pass: () => sweepOnlineRules(),
  failed: "online sweep failed",
});

/** Start this process's sweep every ONLINE_SWEEP_INTERVAL_MS (idempotent; 0 leaves it off). */
export const startOnlineSweep = (): void => loop.start();

/** Stop the sweep (shutdown) and wait for a pass in progress, so no run starts after the runs are drained. */
export const stopOnlineSweep = (): Promise<void> => loop.stop();
