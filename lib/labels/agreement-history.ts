/**
 * A metric's agreement with the truth per prompt version (issue 39): each version's κ, accuracy and
 * intervals from the results its runs saved while it was in effect (the latest per cell within that
 * time), against people's labels or the metric's reference. Computed when asked, so a change of prompt or
 * model (a new version) shows up as a new row as soon as a run judges with it.
 */
import "server-only";
import { listAlignmentRows } from "@/db/repositories/alignments";
import { listPromptVersions } from "@/db/repositories/prompt-versions";
import { resultReadingsBetween } from "@/db/repositories/readings";
import { agreementKind, computeAgreement, type PairedItem } from "@/lib/agreement";
import { getMetricRow } from "@/lib/metrics/metrics";
import { DEFAULT_PROGRESS_THRESHOLD, readSource } from "./agreement-report";
import { readingOfResult } from "./readings";

type Strategy = "few_shot" | "rewrite" | "threshold";

export type AgreementHistory = {
  pipeline_node_id: number;
  truth: "labels" | "reference";
  versions: Array<{
    version: number;
    created_at: string;
    model_name: string | null;
    prompt: string;
    n: number;
    kappa: number | null;
    kappa_interval: [number, number] | null;
    accuracy: number | null;
    accuracy_interval: [number, number] | null;
    aligned: { alignment_id: number; strategy: Strategy; kappa: number | null; kappa_interval: [number, number] | null; baseline_kappa: number | null } | null;
  }>;
};

/** Truth: `labels` (default when the metric has any) or `reference`. */
export async function getAgreementHistory(id: number, truthAsked?: "labels" | "reference"): Promise<AgreementHistory> {
  const node = await getMetricRow(id);
  const labels = await readSource(node, "labels", "b");
  const truth = truthAsked ?? (labels.size === 0 && node.reference ? "reference" : "labels");
  const truthCells = truth === "labels" ? labels : await readSource(node, "reference", "b");
  const versions = await listPromptVersions(node.id);
  const kind = agreementKind(node.outputType);
  // Versions promoted from an alignment carry its held-out figures, so a new version reads at once.
  type Stored = { promoted?: Array<{ strategy: Strategy; version: number }>; candidates?: Array<{ strategy: string; held_out: { kappa: number | null; intervals: { kappa: [number, number] | null } } }>; baseline?: { kappa: number | null } };
  const aligned = new Map<number, NonNullable<AgreementHistory["versions"][number]["aligned"]>>();
  for (const a of await listAlignmentRows(node.id)) {
    const report = (a.report ?? {}) as Stored;
    for (const p of report.promoted ?? []) {
      const c = report.candidates?.find((x) => x.strategy === p.strategy);
      if (c && !aligned.has(p.version)) aligned.set(p.version, { alignment_id: a.id, strategy: p.strategy, kappa: c.held_out.kappa, kappa_interval: c.held_out.intervals.kappa, baseline_kappa: report.baseline?.kappa ?? null });
    }
  }
  const out: AgreementHistory["versions"] = [];
  for (const [i, v] of versions.entries()) {
    const latest = new Map<string, PairedItem>();
    for (const row of await resultReadingsBetween(node.id, v.createdAt, versions[i + 1]?.createdAt ?? null)) {
      const k = `${row.entityType}:${row.entityId}`;
      const b = truthCells.get(k);
      const a = readingOfResult(node.outputType, row);
      if (!b || a === undefined) continue;
      latest.set(k, { entity_type: row.entityType, entity_id: row.entityId, conversation_id: row.conversationId, a, b: b.reading });
    }
    const items = [...latest.values()];
    const passFail = items.some((x) => typeof x.a === "boolean" || typeof x.b === "boolean");
    const f = computeAgreement(kind, items, { threshold: kind === "score" && (passFail || node.outputType === "progress") ? DEFAULT_PROGRESS_THRESHOLD : undefined });
    out.push({
      version: v.version,
      created_at: v.createdAt,
      model_name: v.modelName,
      prompt: v.prompt,
      n: f.n,
      kappa: f.kappa,
      kappa_interval: f.intervals.kappa,
      accuracy: f.accuracy,
      accuracy_interval: f.intervals.accuracy,
      aligned: aligned.get(v.version) ?? null,
    });
  }
  return { pipeline_node_id: node.id, truth, versions: out };
}
