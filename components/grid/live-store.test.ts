import { describe, expect, it, vi } from "vitest";
import { LiveCells, viewOf } from "./live-store";

const stored = { status: "completed" as const, result: { score: 0.2 }, error: null, execution_id: 1, updated_at: "2026-11-21T10:00:00.000Z" };

describe("LiveCells", () => {
  it("notifies only the listeners of the cell that changed", () => {
    const store = new LiveCells();
    const a = vi.fn();
    const b = vi.fn();
    store.subscribe("1:conversation:1", a);
    store.subscribe("1:conversation:2", b);
    store.set("1:conversation:1", { status: "processing", executionId: 5, progress: 10 });
    expect(a).toHaveBeenCalledTimes(1);
    expect(b).not.toHaveBeenCalled();
  });

  it("marks pending without hiding a cell another run is judging, and clears a run's unfinished cells", () => {
    const store = new LiveCells();
    store.set("k1", { status: "processing", executionId: 1, progress: 50 });
    store.markPending(["k1", "k2", "k3"], 2);
    expect(store.get("k1")).toMatchObject({ status: "processing", executionId: 1 });
    expect(store.get("k2")).toEqual({ status: "pending", executionId: 2 });
    store.set("k3", { status: "completed", executionId: 2, result: { value: true }, error: null, updatedAt: "2026-11-21T11:00:00.000Z", detail: null });
    store.clearUnfinished(2);
    expect(store.get("k2")).toBeUndefined();
    expect(store.get("k3")?.status).toBe("completed");
    expect(store.get("k1")?.status).toBe("processing");
  });
});

describe("viewOf", () => {
  it("shows the grid's result when there is no live state, and empty when neither", () => {
    expect(viewOf(undefined, undefined)).toEqual({ status: "empty" });
    expect(viewOf(undefined, stored)).toMatchObject({ status: "completed", executionId: 1, result: { score: 0.2 } });
  });

  it("prefers pending and processing over a stored result", () => {
    expect(viewOf({ status: "pending", executionId: 2 }, stored).status).toBe("pending");
  });

  it("takes the newer of a live result and a stored one", () => {
    const older = { status: "failed" as const, executionId: 2, result: null, error: "x", updatedAt: "2026-11-21T09:00:00.000Z", detail: null };
    const newer = { ...older, updatedAt: "2026-11-21T12:00:00.000Z" };
    expect(viewOf(older, stored).status).toBe("completed");
    expect(viewOf(newer, stored).status).toBe("failed");
  });
});
