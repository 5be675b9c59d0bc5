/**
 * Live cell states from the SSE streams, kept outside React state so that one event re-renders
 * exactly the cell it is about (each cell subscribes to its own key), never the whole grid.
 */
import { useSyncExternalStore } from "react";
import type { CellView, GridCell, LiveCell } from "./types";

type Listener = () => void;

export class LiveCells {
  private cells = new Map<string, LiveCell>();
  private listeners = new Map<string, Set<Listener>>();

  get(key: string): LiveCell | undefined {
    return this.cells.get(key);
  }

  set(key: string, cell: LiveCell): void {
    this.cells.set(key, cell);
    this.notify(key);
  }

  /** Mark cells pending for a run, without hiding a cell another run is already judging. */
  markPending(keys: Iterable<string>, executionId: number): void {
    for (const key of keys) {
      const current = this.cells.get(key);
      if (current?.status === "processing" && current.executionId !== executionId) continue;
      this.set(key, { status: "pending", executionId });
    }
  }

  /** When a run ends, its cells that never got a result (cancelled, or not in the server's plan) go back. */
  clearUnfinished(executionId: number): void {
    for (const [key, cell] of this.cells) {
      if ((cell.status === "pending" || cell.status === "processing") && cell.executionId === executionId) {
        this.cells.delete(key);
        this.notify(key);
      }
    }
  }

  subscribe(key: string, listener: Listener): () => void {
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(key);
    };
  }

  private notify(key: string): void {
    for (const listener of this.listeners.get(key) ?? []) listener();
  }
}

/** The live state of one cell; re-renders only when that cell changes. */
export function useLiveCell(store: LiveCells, key: string): LiveCell | undefined {
  return useSyncExternalStore(
    (listener) => store.subscribe(key, listener),
    () => store.get(key),
    () => undefined,
  );
}

/** The newer of the live overlay and the grid's stored result. */
export function viewOf(live: LiveCell | undefined, stored: GridCell | undefined): CellView {
  const fromStore: CellView = stored
    ? { status: stored.status, executionId: stored.execution_id, result: stored.result, error: stored.error, updatedAt: stored.updated_at, detail: null }
    : { status: "empty" };
  if (!live) return fromStore;
  if (live.status === "pending" || live.status === "processing") return live;
  // A grid page fetched after the event (another tab's run, say) may hold a newer result.
  if (stored && stored.updated_at > live.updatedAt) return fromStore;
  return live;
}
