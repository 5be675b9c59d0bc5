/**
 * Judge calls made outside any run, generation, comparison or alignment — the feedback on a refused import
 * (lib/import/feedback.ts) and the mapping the model writes for a file nothing else reads
 * (lib/import/structure/model-mapping.ts) — counted where a user can read them: each call's own figure goes back
 * with its answer (`llm_feedback.usage`), and this process's totals since it started are in
 * `GET /api/settings/judge` (`side_calls`) and on the settings page. Kept in memory: a restart starts the
 * totals again, and each server process counts its own calls (docs/importing.md, "What the feedback costs").
 */
import { processSingleton } from "@/lib/process-state";
import { costOf } from "./config";

export type SideCallKind = "import_feedback" | "import_mapping";
export type SideUsage = { judge_calls: number; input_tokens: number; output_tokens: number; cost_usd: number | null };

const empty = (): SideUsage => ({ judge_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 });
// One tally per process: Next.js bundles route handlers and pages apart, each with its own copy of this
// module, so a module-level tally counted the import route's calls where the Settings page never read them.
const tally = processSingleton("judge.side-usage", () => ({ since: new Date().toISOString(), totals: { import_feedback: empty(), import_mapping: empty() } as Record<SideCallKind, SideUsage> }));
const totals = tally.totals;

/** One call's figure, to be filled as it goes: counted when it is sent, its tokens when it answers. */
export function sideUsage(): SideUsage {
  return empty();
}

/** Count one call as it is sent (an unanswered call is a call too: a provider may bill it). */
export function countSideCall(kind: SideCallKind, usage: SideUsage): void {
  usage.judge_calls++;
  totals[kind].judge_calls++;
}

/** Add an answered call's tokens, priced with JUDGE_PRICES (null once a model without a price answered). */
export function addSideTokens(kind: SideCallKind, usage: SideUsage, model: string, inputTokens: number, outputTokens: number): void {
  if (inputTokens + outputTokens === 0) return;
  const cost = costOf(model, inputTokens, outputTokens);
  for (const u of [usage, totals[kind]]) {
    u.input_tokens += inputTokens;
    u.output_tokens += outputTokens;
    u.cost_usd = cost === null || u.cost_usd === null ? null : u.cost_usd + cost;
  }
}

/** This process's totals since it started. */
export function sideUsageTotals(): { since: string } & Record<SideCallKind, SideUsage> {
  return { since: tally.since, import_feedback: { ...totals.import_feedback }, import_mapping: { ...totals.import_mapping } };
}
