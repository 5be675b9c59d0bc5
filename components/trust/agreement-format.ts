/** Shared by the agreement page's panels: how figures, sources and cells are written and linked. */

export type EntityRef = { entity_type: string; entity_id: number; conversation_id: number };

/** A figure to three decimals, "—" when undefined. */
export const fmt = (x: number | null | undefined) => (x === null || x === undefined ? "—" : x.toFixed(3));

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
