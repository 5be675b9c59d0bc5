/** Shapes the dataset grid works with on the client (built from the wire types, never from the db). */
import type { EvaluationLevel } from "@/lib/vocabulary";
import type { GridRow, IndividualResult } from "@/lib/schemas/executions";

/** Conversations per grid page: a screenful many times over, and one fast query. */
export const GRID_PAGE_SIZE = 100;

export type GridCell = GridRow["cells"][string];

/** One line of the virtualised grid: a loaded entity, a conversation not fetched yet, or a loading note. */
export type DisplayRow =
  | { kind: "entity"; id: string; row: GridRow; depth: 0 | 1 | 2; index: number; expandable: boolean }
  | { kind: "placeholder"; id: string; index: number }
  | { kind: "note"; id: string; depth: 1; text: string; tone: "muted" | "error" };

/** What the live stream knows about a cell; it overlays the grid data until the grid is newer. */
export type LiveCell =
  | { status: "pending"; executionId: number }
  | { status: "processing"; executionId: number; progress: number }
  | {
      status: "completed" | "failed" | "skipped";
      executionId: number;
      result: unknown;
      error: string | null;
      updatedAt: string;
      detail: IndividualResult | null;
    };

/** The state a cell shows: the newer of the live overlay and the grid's latest result. */
export type CellView = { status: "empty" } | LiveCell;

export function cellKey(nodeId: number, entityType: EvaluationLevel, entityId: number): string {
  return `${nodeId}:${entityType}:${entityId}`;
}

/** Run settings that apply to every run started from the page. */
export type RunSettings = { mode: "sync" | "async"; batchSize: number; model: string };

/** A run request in the API's terms (POST /evaluation-pipeline-executions/run). */
export type RunScope = {
  pipeline_node_id?: number;
  entity_type?: EvaluationLevel;
  entity_id?: number;
  retry?: boolean;
  /** Ask the judge again even when an unchanged cell has a cached verdict. */
  no_cache?: boolean;
  /** Stop the run once its judge calls cost this much. */
  max_cost_usd?: number;
};
