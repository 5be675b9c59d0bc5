/** Shared by the agreement page's panels: how figures, sources and cells are written and linked. */

/** A run as the execution list gives it, with what the pages need. */
export type ExecutionSummary = { id: number; status: string; created_at: string; successful_evaluations: number; failed_evaluations: number; meta: { model: string | null } };

/** A run with at least one cell evaluated: an empty one (n = 0) reads no cell, so it is never a default or a source. */
export const hasCells = (e: Pick<ExecutionSummary, "successful_evaluations" | "failed_evaluations">) => e.successful_evaluations + e.failed_evaluations > 0;

export type EntityRef = { entity_type: string; entity_id: number; conversation_id: number };

/** A figure to three decimals, "—" when undefined; a tiny negative is "0.000", not "-0.000" (a weighted κ of −1e-17). */
export const fmt = (x: number | null | undefined) => {
  if (x === null || x === undefined) return "—";
  const text = x.toFixed(3);
  return /^-0\.0+$/.test(text) ? text.slice(1) : text;
};

/** Where a cell opens in the grid: the workspace with that row's conversation open on it. */
export function cellHref(datasetId: number, e: EntityRef): string {
  return `/datasets/${datasetId}?open=${e.entity_type}:${e.entity_id}&conversation=${e.conversation_id}`;
}

export function sourceLabel(source: string): string {
  if (source === "latest") return "Latest results (grid)";
  if (source === "labels") return "Human labels (anyone's newest)";
  if (source.startsWith("labels:")) return `Labels of ${source.slice("labels:".length)}`;
  if (source === "reference") return "Reference";
  return source.replace("execution:", "Run #");
}
