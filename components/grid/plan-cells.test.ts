import { describe, expect, it } from "vitest";
import type { GridRow } from "@/lib/schemas/executions";
import type { Metric } from "@/lib/schemas/metrics";
import { LiveCells } from "./live-store";
import { plannedKeys } from "./plan-cells";
import { childRows } from "./use-grid-data";

function row(entity_type: GridRow["entity_type"], id: number, conversation: number, message: number | null = null, cells: GridRow["cells"] = {}): GridRow {
  return {
    entity_type,
    entity_id: id,
    conversation_id: conversation,
    message_id: entity_type === "conversation" ? null : (message ?? id),
    step_id: entity_type === "step" ? id : null,
    position: 0,
    label: `${entity_type} ${id}`,
    role: null,
    step_kinds: entity_type === "step" ? ["tool_call"] : null,
    cells,
  };
}

function metric(id: number, level: Metric["evaluation_level"]): Metric {
  return { id, evaluation_level: level, name: `m${id}` } as Metric;
}

const metrics = [metric(1, "conversation"), metric(2, "message"), metric(3, "step")];
const done = { status: "completed" as const, result: {}, error: null, execution_id: 9, updated_at: "2026-11-21T10:00:00.000Z" };
const rows = [
  row("conversation", 10, 10, null, { "1": done }),
  row("message", 100, 10),
  row("step", 1000, 10, 100),
  row("conversation", 20, 20),
  row("message", 200, 20),
];

describe("plannedKeys", () => {
  it("covers every known cell of every metric for run all", () => {
    expect(plannedKeys({}, rows, metrics, new LiveCells()).sort()).toEqual(
      ["1:conversation:10", "2:message:100", "3:step:1000", "1:conversation:20", "2:message:200"].sort(),
    );
  });

  it("limits a row to the conversation and what it contains, a message to itself and its steps", () => {
    expect(plannedKeys({ entity_type: "conversation", entity_id: 10 }, rows, metrics, new LiveCells()).sort()).toEqual(
      ["1:conversation:10", "2:message:100", "3:step:1000"].sort(),
    );
    expect(plannedKeys({ entity_type: "message", entity_id: 100 }, rows, metrics, new LiveCells()).sort()).toEqual(["2:message:100", "3:step:1000"]);
  });

  it("limits a column to its metric and a cell to one key", () => {
    expect(plannedKeys({ pipeline_node_id: 2 }, rows, metrics, new LiveCells())).toEqual(["2:message:100", "2:message:200"]);
    expect(plannedKeys({ pipeline_node_id: 1, entity_type: "conversation", entity_id: 20 }, rows, metrics, new LiveCells())).toEqual(["1:conversation:20"]);
  });

  it("skips completed cells when retrying failed ones", () => {
    const keys = plannedKeys({ retry: true, pipeline_node_id: 1 }, rows, metrics, new LiveCells());
    expect(keys).toEqual(["1:conversation:20"]);
  });
});

describe("childRows", () => {
  it("puts steps under their message and other messages' steps after them", () => {
    const out = childRows(10, {
      messages: [row("message", 100, 10), row("message", 101, 10)],
      steps: [row("step", 1000, 10, 100), row("step", 1001, 10, 101), row("step", 1002, 10, 55)],
    });
    expect(out.map((r) => (r.kind === "entity" ? `${r.id}@${r.depth}` : r.kind))).toEqual([
      "message:100@1",
      "step:1000@2",
      "message:101@1",
      "step:1001@2",
      "step:1002@1",
    ]);
  });

  it("says so when a conversation has nothing to show", () => {
    expect(childRows(10, { messages: [], steps: [] })).toMatchObject([{ kind: "note" }]);
  });
});
