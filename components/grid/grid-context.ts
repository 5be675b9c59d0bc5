"use client";

/**
 * What grid cells need from the workspace, through context so that column definitions stay stable:
 * the live store and the actions (all stable callbacks), and separately the row state that changes.
 */
import { createContext, useContext } from "react";
import type { GridRow } from "@/lib/schemas/executions";
import type { Metric } from "@/lib/schemas/metrics";
import type { LiveCells } from "./live-store";

export type GridActions = {
  store: LiveCells;
  datasetId: number;
  runCell: (metric: Metric, row: GridRow, opts?: { fresh?: boolean }) => void;
  runRow: (row: GridRow) => void;
  openDetail: (anchor: HTMLElement, metric: Metric, row: GridRow) => void;
  openRow: (row: GridRow) => void;
  toggleExpanded: (conversationId: number) => void;
};

export type RowState = { expanded: ReadonlySet<number>; selected: string | null };

export const GridActionsContext = createContext<GridActions | null>(null);
export const RowStateContext = createContext<RowState>({ expanded: new Set(), selected: null });

export function useGridActions(): GridActions {
  const actions = useContext(GridActionsContext);
  if (!actions) throw new Error("grid cells must be rendered inside GridActionsContext");
  return actions;
}

export function useRowState(): RowState {
  return useContext(RowStateContext);
}
