/** A page of an execution's results (`limit`/`offset`): results in id order, the count of all of them, aggregates over all. */
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { insertConversationFixture } from "@/lib/testing/seed/rows";
import { addTestResult, createTestDataset, createTestExecution, createTestMetric } from "@/lib/testing/seed/results";
import * as results from "./route";

let executionId: number;
let other: number;
let saved: number[];

beforeAll(async () => {
  const ds = await createTestDataset("results pages");
  const metric = await createTestMetric(ds.id, "conversation", "progress", "Quality");
  const execution = await createTestExecution(metric);
  const second = await createTestExecution(metric);
  executionId = execution.id;
  other = second.id;
  saved = [];
  for (let i = 0; i < 7; i++) {
    const c = await insertConversationFixture(ds.id, { position: i });
    const entity = { type: "conversation" as const, id: c.conversationId, conversationId: c.conversationId };
    const failed = i === 3;
    saved.push((await addTestResult({ executionId, node: metric, entity, score: failed ? null : i / 10, result: failed ? null : { score: i / 10 }, status: failed ? "failed" : "completed", error: failed ? "timeout" : null })).id);
    // Another execution's results interleave with this one's ids: none of them may show.
    await addTestResult({ executionId: other, node: metric, entity, score: 1, result: { score: 1 } });
  }
});

const get = (id: number, query: string) => call(results.GET, "GET", `/api/evaluation-pipeline-executions/${id}/results?${query}`, { params: { id } });

describe("GET /api/evaluation-pipeline-executions/{id}/results?limit&offset", () => {
  it("pages the execution's results in id order with the count of all of them", async () => {
    const ids: number[] = [];
    for (let offset = 0; offset < 10; offset += 3) {
      const res = await get(executionId, `limit=3&offset=${offset}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-total-count")).toBe("7");
      expect(res.json.execution_id).toBe(executionId);
      ids.push(...(res.json.results as Array<{ id: number }>).map((r) => r.id));
    }
    expect(ids).toEqual(saved);
    const page = await get(executionId, "limit=2&offset=2");
    expect(page.json.results).toMatchObject([{ id: saved[2], status: "completed", result: { score: 0.2 } }, { id: saved[3], status: "failed", error: "timeout" }]);
    // Aggregates cover every result, not only the page's.
    expect(Object.values(page.json.aggregated)).toEqual([expect.objectContaining({ total: 6, min_score: 0, max_score: 0.6 })]);
    expect((await get(other, "limit=100")).headers.get("x-total-count")).toBe("7");
  });

  it("counts none for an execution without results, 404 for an unknown one", async () => {
    const ds = await createTestDataset("results pages, empty");
    const empty = await createTestExecution(await createTestMetric(ds.id, "conversation", "progress"));
    const res = await get(empty.id, "limit=5");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-total-count")).toBe("0");
    expect(res.json.results).toEqual([]);
    expect((await get(999999, "limit=5")).status).toBe(404);
  });
});
