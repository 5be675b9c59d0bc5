/**
 * insertResults: the runner's write path for check cells (multi-row INSERTs, one counter update). The
 * rows and counters must equal what one insertResult per cell would leave, and a chunk is atomic.
 */
import { describe, expect, it } from "vitest";
import { insertConversationFixture } from "@/lib/testing/seed/rows";
import { createDataset } from "./datasets";
import { getExecutionRow, insertExecution, updateExecution } from "./executions";
import { insertResult, insertResultOnce, insertResults, insertResultsOnce, latestResultsFor, listResultRows, type NewResult } from "./evaluation-results";
import { readJudgeCache, type JudgeCacheEntry } from "./judge";
import { createNode } from "./metrics";

async function setup() {
  const dataset = await createDataset({ name: "insertResults", userId: "test" });
  const fixture = await insertConversationFixture(dataset.id);
  const node = await createNode(dataset.id, {
    name: "budget",
    evaluationLevel: "message",
    prompt: "",
    outputType: "checkbox",
    templateVariables: [],
    isAdvanced: false,
    kind: "check",
    check: { type: "step_count", params: { max: 5 } },
  });
  const execution = await insertExecution({ evaluationPipelineId: null, datasetId: dataset.id, pipelineNodeId: node.id, totalEvaluations: 230, meta: {} });
  const cell = (i: number, status: NewResult["status"]): NewResult => ({
    executionId: execution.id,
    pipelineNodeId: node.id,
    datasetId: dataset.id,
    entityType: "message",
    entityId: fixture.assistantMessageId,
    conversationId: fixture.conversationId,
    messageId: fixture.assistantMessageId,
    stepId: null,
    result: status === "completed" ? { value: i % 2 === 0, reasoning: `cell ${i}` } : null,
    score: status === "completed" ? (i % 2 === 0 ? 1 : 0) : null,
    status,
    error: status === "completed" ? null : `${status} ${i}`,
    rawOutput: null,
    executionTime: i,
    modelName: "check:step_count",
    inputTokens: 0,
    outputTokens: 0,
    cached: false,
  });
  return { execution, cell };
}

describe("insertResults", () => {
  it("saves 230 cells over several multi-row statements in order, and counts successes, skips and failures", async () => {
    const { execution, cell } = await setup();
    const statuses = Array.from({ length: 230 }, (_, i) => (i % 23 === 0 ? "failed" : i % 10 === 0 ? "skipped" : "completed") as NewResult["status"]);
    const saved = await insertResults(execution.id, statuses.map((s, i) => cell(i, s)));
    expect(saved).toHaveLength(230);
    for (let i = 1; i < saved.length; i++) expect(saved[i].id).toBeGreaterThan(saved[i - 1].id);
    // What the caller gets back is what a reader of the table gets.
    expect(await listResultRows(execution.id)).toEqual(saved);
    expect(saved[7]).toMatchObject({ status: "completed", executionTime: 7, result: { value: false, reasoning: "cell 7" }, score: 0 });

    const failed = statuses.filter((s) => s === "failed").length;
    const skipped = statuses.filter((s) => s === "skipped").length;
    const row = (await getExecutionRow(execution.id))!;
    expect(row).toMatchObject({ successfulEvaluations: 230 - failed - skipped, skippedEvaluations: skipped, failedEvaluations: failed });
    expect(row.errors).toHaveLength(failed);
    expect((row.errors as Array<{ message: string }>)[1].message).toBe("failed 23");
  });

  it("is atomic: a row the database refuses leaves no row and no count of the whole call", async () => {
    const { execution, cell } = await setup();
    const values = Array.from({ length: 150 }, (_, i) => cell(i, "completed"));
    // The status check constraint refuses this row, in the second multi-row statement.
    values[120] = { ...values[120], status: "bogus" as NewResult["status"] };
    await expect(insertResults(execution.id, values)).rejects.toThrow();
    expect(await listResultRows(execution.id)).toEqual([]);
    expect(await getExecutionRow(execution.id)).toMatchObject({ successfulEvaluations: 0, skippedEvaluations: 0, failedEvaluations: 0 });
  });
});

describe("insertResultOnce / insertResultsOnce (queued runs: a batch may be worked twice)", () => {
  it("stores a cell once: a second save of the same (metric, entity) stores and counts nothing", async () => {
    const { execution, cell } = await setup();
    const first = await insertResultOnce(cell(1, "completed"));
    expect(first).toMatchObject({ counted: 1, saved: { executionTime: 1 } });
    // Two holders at once: only one of them stores it.
    const both = await Promise.all([insertResultOnce(cell(2, "completed")), insertResultOnce(cell(3, "failed"))]);
    expect(both).toEqual([null, null]);
    const many = await insertResultsOnce(execution.id, [cell(4, "completed"), cell(5, "skipped")]);
    expect(many).toEqual({ saved: [null, null], counted: 1 });
    expect(await listResultRows(execution.id)).toHaveLength(1);
    expect(await getExecutionRow(execution.id)).toMatchObject({ successfulEvaluations: 1, failedEvaluations: 0, skippedEvaluations: 0 });
  });

  it("stores nothing once the execution is final (a cancel committed first)", async () => {
    const { execution, cell } = await setup();
    await updateExecution(execution.id, { status: "cancelled", completedAt: new Date().toISOString() });
    expect(await insertResultOnce(cell(1, "completed"))).toBeNull();
    expect((await insertResultsOnce(execution.id, [cell(2, "completed")])).saved).toEqual([null]);
    expect(await listResultRows(execution.id)).toEqual([]);
  });
});

describe("a cell's result and its verdict's cache entry are saved together", () => {
  const entry = (key: string): JudgeCacheEntry => ({ key, model: "judge-x", response: { value: true, reasoning: "yes" }, inputTokens: 11, outputTokens: 3 });

  it("insertResult: the row returned is the row stored, and the cache entry is written with it", async () => {
    const { execution, cell } = await setup();
    const key = `k-${execution.id}-a`;
    const saved = await insertResult(cell(2, "completed"), entry(key));
    expect(await listResultRows(execution.id)).toEqual([saved]);
    expect(await readJudgeCache(key)).toEqual({ response: { value: true, reasoning: "yes" }, inputTokens: 11, outputTokens: 3 });
  });

  it("insertResultOnce: every field as stored, a failure appended to errors and counted, the cache entry written", async () => {
    const { execution, cell } = await setup();
    const key = `k-${execution.id}-b`;
    const ok = await insertResultOnce(cell(4, "completed"), entry(key));
    expect(ok?.counted).toBe(1);
    expect(await readJudgeCache(key)).toMatchObject({ inputTokens: 11 });
    const failed = await insertResultOnce({ ...cell(5, "failed"), entityType: "conversation", entityId: cell(5, "failed").conversationId, cached: true });
    expect(failed?.counted).toBe(2);
    // What the save returns (and the stream announces) is exactly what a later read gives.
    expect(await listResultRows(execution.id)).toEqual([ok!.saved, failed!.saved]);
    const row = await getExecutionRow(execution.id);
    expect(row).toMatchObject({ successfulEvaluations: 1, failedEvaluations: 1, skippedEvaluations: 0 });
    expect(row!.errors).toEqual([{ pipeline_node_id: cell(5, "failed").pipelineNodeId, entity_type: "conversation", entity_id: cell(5, "failed").conversationId, message: "failed 5" }]);
    // A cell already saved stores nothing more, but the verdict still goes into the cache.
    const again = `k-${execution.id}-c`;
    expect(await insertResultOnce(cell(6, "completed"), entry(again))).toBeNull();
    expect(await readJudgeCache(again)).toMatchObject({ outputTokens: 3 });
    expect(await listResultRows(execution.id)).toHaveLength(2);
  });
});

describe("latestResultsFor (the grid's cells)", () => {
  it("gives the latest result of each (metric, entity) asked for, for id lists of any length, and nothing else", async () => {
    const { execution, cell } = await setup();
    const dataset = execution.datasetId;
    const nodeOf = (name: string) => createNode(dataset, { name, evaluationLevel: "message", prompt: "p", outputType: "checkbox", templateVariables: [], isAdvanced: false });
    const [a, b, c] = [await nodeOf("a"), await nodeOf("b"), await nodeOf("c")];
    const fixtures = [];
    for (let i = 0; i < 4; i++) fixtures.push(await insertConversationFixture(dataset, { position: i + 1 }));
    const m = fixtures.map((f) => f.assistantMessageId);
    const save = async (nodeId: number, entityId: number, i: number, entityType: NewResult["entityType"] = "message") =>
      (await insertResults(execution.id, [{ ...cell(i, "completed"), pipelineNodeId: nodeId, entityId, entityType }]))[0].id;
    await save(a.id, m[0], 1);
    const latestA0 = await save(a.id, m[0], 2); // a newer result of the same cell
    const latestB0 = await save(b.id, m[0], 3);
    const latestA1 = await save(a.id, m[1], 4);
    const latestC1 = await save(c.id, m[1], 5); // a metric not asked for below
    await save(a.id, m[2], 6, "conversation"); // another level with the same entity id
    const latestA3 = await save(a.id, m[3], 7);

    const ids = async (nodes: number[], entities: number[]) => (await latestResultsFor(nodes, "message", entities)).map((r) => r.id).sort((x, y) => x - y);
    expect(await ids([a.id, b.id], m)).toEqual([latestA0, latestB0, latestA1, latestA3]);
    expect(await ids([b.id, a.id], [m[0]])).toEqual([latestA0, latestB0]);
    expect(await ids([a.id], [m[2]])).toEqual([]);
    expect(await ids([c.id], [m[0], m[3]])).toEqual([]);
    expect(await ids([a.id, b.id], [])).toEqual([]);
    // A long list (a page of 500 rows) with ids that have no result.
    const many = [...Array.from({ length: 497 }, (_, i) => 1_000_000 + i), m[1], m[3], m[0]];
    expect(await ids([a.id, b.id, c.id], many)).toEqual([latestA0, latestB0, latestA1, latestC1, latestA3]);
    const rows = await latestResultsFor([a.id], "message", [m[0]]);
    expect(rows).toEqual([expect.objectContaining({ id: latestA0, pipelineNodeId: a.id, entityType: "message", entityId: m[0], executionTime: 2, result: { value: true, reasoning: "cell 2" } })]);
  });
});
