import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getDb } from "@/db/sqlite-database";
import { getPgDb } from "@/db/pg";
import { dialect } from "@/db/dialect";
import { gridRowSchema } from "@/lib/schemas/executions";
import { messageLabel, stepLabel } from "@/lib/results/grid";
import { call } from "@/lib/testing/http/call";
import { insertConversationFixture } from "@/lib/testing/seed/rows";
import { addTestResult, createTestDataset, createTestExecution, createTestMetric } from "@/lib/testing/seed/results";
import * as grid from "./route";

type Fixture = Awaited<ReturnType<typeof seed>>;
let fx: Fixture;

async function seed() {
  const ds = await createTestDataset("grid");
  // Inserted out of order: rows must follow positions, not ids.
  const second = await insertConversationFixture(ds.id, { position: 1, name: "" });
  const first = await insertConversationFixture(ds.id, { position: 0, name: "Refund request" });
  const convMetric = await createTestMetric(ds.id, "conversation", "progress", "Helpfulness");
  const convText = await createTestMetric(ds.id, "conversation", "text", "Summary");
  const msgMetric = await createTestMetric(ds.id, "message", "checkbox", "Polite");
  const older = await createTestExecution(convMetric);
  const newer = await createTestExecution(convMetric);
  const conv = (f: typeof first) => ({ type: "conversation" as const, id: f.conversationId, conversationId: f.conversationId });
  await addTestResult({ executionId: older.id, node: convMetric, entity: conv(first), result: { score: 0.2, reasoning: "old" }, score: 0.2 });
  await addTestResult({ executionId: newer.id, node: convMetric, entity: conv(first), result: { score: 0.8, reasoning: "new" }, score: 0.8 });
  // The newer run failed on the second conversation: the failure is what the cell shows.
  await addTestResult({ executionId: older.id, node: convMetric, entity: conv(second), result: { score: 1 }, score: 1 });
  await addTestResult({ executionId: newer.id, node: convMetric, entity: conv(second), status: "failed", error: "rate limited" });
  await addTestResult({ executionId: older.id, node: convText, entity: conv(first), result: { value: "ok" } });
  await addTestResult({
    executionId: newer.id,
    node: msgMetric,
    entity: { type: "message", id: first.assistantMessageId, conversationId: first.conversationId, messageId: first.assistantMessageId },
    result: { value: true, reasoning: "polite" },
    score: 1,
  });
  // A result filed under the wrong level (a metric moved to another level later): not a column here.
  await addTestResult({ executionId: newer.id, node: msgMetric, entity: conv(first), result: { value: false }, score: 0 });
  return { ds, first, second, convMetric, convText, msgMetric, older, newer };
}

beforeAll(async () => {
  fx = await seed();
});

afterEach(() => {
  vi.restoreAllMocks();
});

const get = (query: string, id: number = fx.ds.id) => call(grid.GET, "GET", `/api/datasets/${id}/grid${query}`, { params: { id } });

describe("GET /api/datasets/{id}/grid", () => {
  it("lists conversations in position order with the latest result per metric across executions", async () => {
    const res = await get("");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-total-count")).toBe("2");
    const rows = res.json.map((r: unknown) => gridRowSchema.parse(r));
    // The second has no name nor meta id: it is called by its first user words (issue 26.5).
    expect(rows.map((r: { label: string }) => r.label)).toEqual(["Refund request", "find x"]);
    const [a, b] = rows;
    expect(a).toMatchObject({
      entity_type: "conversation",
      entity_id: fx.first.conversationId,
      conversation_id: fx.first.conversationId,
      message_id: null,
      step_id: null,
      position: 0,
      role: null,
    });
    expect(Object.keys(a.cells).sort()).toEqual([String(fx.convMetric.id), String(fx.convText.id)].sort());
    // The message-level metric is summed up on its conversation's row (issue 34.6: a message run looked empty);
    // the result filed at the conversation's level is not one of its message cells.
    expect(a.rollups).toEqual({ [fx.msgMetric.id]: { completed: 1, failed: 0, mean: 1 } });
    expect(b.rollups).toEqual({});
    expect(a.cells[fx.convMetric.id]).toMatchObject({
      status: "completed",
      result: { score: 0.8, reasoning: "new" },
      error: null,
      execution_id: fx.newer.id,
    });
    expect(a.cells[fx.convMetric.id].updated_at).toMatch(/Z$/);
    expect(a.cells[fx.convText.id]).toMatchObject({ result: { value: "ok" }, execution_id: fx.older.id });
    expect(b.position).toBe(1);
    expect(b.cells).toEqual({
      [fx.convMetric.id]: expect.objectContaining({ status: "failed", error: "rate limited", result: null, execution_id: fx.newer.id }),
    });
  });

  it("lists assistant messages only at message level, with a one-line label", async () => {
    const res = await get("?level=message");
    expect(res.headers.get("x-total-count")).toBe("2");
    expect(res.json).toHaveLength(2);
    expect(res.json[0]).toMatchObject({
      entity_type: "message",
      entity_id: fx.first.assistantMessageId,
      conversation_id: fx.first.conversationId,
      message_id: fx.first.assistantMessageId,
      step_id: null,
      position: 1,
      label: "found x",
      role: "assistant",
    });
    expect(res.json[0].cells[fx.msgMetric.id]).toMatchObject({ result: { value: true }, status: "completed" });
    expect(res.json[1].conversation_id).toBe(fx.second.conversationId);
    expect(res.json[1].cells).toEqual({});
  });

  it("lists steps in grid order with what each does", async () => {
    const res = await get("?level=step");
    expect(res.headers.get("x-total-count")).toBe("4");
    expect(res.json.map((r: { label: string; position: number; conversation_id: number }) => [r.conversation_id, r.position, r.label])).toEqual([
      [fx.first.conversationId, 0, "tool_call lookup"],
      [fx.first.conversationId, 1, "output"],
      [fx.second.conversationId, 0, "tool_call lookup"],
      [fx.second.conversationId, 1, "output"],
    ]);
    expect(res.json[0]).toMatchObject({ message_id: fx.first.assistantMessageId, role: "assistant", cells: {} });
    expect(res.json[0].step_id).toBe(res.json[0].entity_id);
  });

  it("filters to one conversation and pages with limit and offset", async () => {
    const one = await get(`?level=step&conversation_id=${fx.second.conversationId}`);
    expect(one.headers.get("x-total-count")).toBe("2");
    expect(one.json.every((r: { conversation_id: number }) => r.conversation_id === fx.second.conversationId)).toBe(true);
    const conv = await get(`?conversation_id=${fx.second.conversationId}`);
    expect(conv.json.map((r: { entity_id: number }) => r.entity_id)).toEqual([fx.second.conversationId]);
    const paged = await get("?level=step&limit=1&offset=2");
    expect(paged.headers.get("x-total-count")).toBe("4");
    expect(paged.json).toHaveLength(1);
    expect(paged.json[0]).toMatchObject({ conversation_id: fx.second.conversationId, position: 0 });
    const past = await get("?limit=5&offset=10");
    expect(past.json).toEqual([]);
    expect(past.headers.get("x-total-count")).toBe("2");
  });

  it("answers 404 for an unknown dataset and 400 for a bad query", async () => {
    for (const q of ["", "?level=step", "?level=message&offset=5", `?sort=metric.${fx.convMetric.id}`, "?meta=channel&filter=meta.channel==web"]) {
      const missing = await get(q, 999999);
      expect(missing.status, q).toBe(404);
      expect(missing.json.error.code).toBe("not_found");
    }
    // A dataset without rows is an empty page, not a 404.
    const empty = await createTestDataset("grid, empty");
    for (const q of ["", "?level=step", "?meta=channel"]) {
      const res = await get(q, empty.id);
      expect(res.status, q).toBe(200);
      expect(res.json).toEqual([]);
      expect(res.headers.get("x-total-count")).toBe("0");
    }
    for (const q of ["?level=turn", "?limit=0", "?limit=501", "?offset=-1", "?conversation_id=abc"]) {
      const res = await get(q);
      expect(res.status, q).toBe(400);
      expect(res.json.error.code).toBe("bad_request");
    }
  });

  it("runs the same few statements for a page of 200 rows as for a page of 2, prepared once", async () => {
    const ds = await createTestDataset("grid-big");
    const metric = await createTestMetric(ds.id, "message", "progress");
    const exec = await createTestExecution(metric);
    for (let i = 0; i < 205; i++) {
      const c = await insertConversationFixture(ds.id, { position: i, name: `c${i}` });
      const entity = { type: "message" as const, id: c.assistantMessageId, conversationId: c.conversationId, messageId: c.assistantMessageId };
      await addTestResult({ executionId: exec.id, node: metric, entity, score: 0.5, result: { score: 0.5 } });
    }
    const statements = async (query: string, id = ds.id) => {
      // SQLite: statements compiled while the page is read. PostgreSQL: statements sent, and their names.
      const spy = dialect.name === "postgres" ? vi.spyOn((await getPgDb()).$client, "query") : vi.spyOn(getDb().$client, "prepare");
      const res = await get(query, id);
      const calls = spy.mock.calls.map((args) => args[0] as unknown);
      spy.mockRestore();
      if (id === ds.id) expect(res.json.every((r: { cells: object }) => Object.keys(r.cells).length === 1)).toBe(true);
      return { calls, rows: res.json.length };
    };
    await statements("?level=message&limit=3&offset=7");
    const small = await statements("?level=message&limit=2");
    const large = await statements("?level=message&limit=200");
    expect(small.rows).toBe(2);
    expect(large.rows).toBe(200);
    if (dialect.name === "postgres") {
      // Page, count, the level's metric ids, latest results (rows prove the dataset exists): each a named (prepared) statement.
      expect(large.calls).toHaveLength(small.calls.length);
      expect(large.calls.length).toBeLessThanOrEqual(4);
      for (const call of large.calls) expect(call).toMatchObject({ name: expect.stringMatching(/^ts_/) });
    } else {
      // The first page compiled them; pages of any size and offset reuse them.
      expect(small.calls).toEqual([]);
      expect(large.calls).toEqual([]);
    }
    // Another conversation's page: the same statements again.
    const one = await statements(`?level=step&conversation_id=${fx.first.conversationId}`, fx.ds.id);
    const other = await statements(`?level=step&conversation_id=${fx.second.conversationId}`, fx.ds.id);
    expect([one.rows, other.rows]).toEqual([2, 2]);
    if (dialect.name === "sqlite") expect(other.calls).toEqual([]);
  });
});

describe("labels", () => {
  it("cuts a message to one line of about 80 characters", () => {
    expect(messageLabel("  Hello\n\nthere\tfriend ")).toBe("Hello there friend");
    expect(messageLabel(null)).toBe("(no content)");
    expect(messageLabel(" \n ")).toBe("(no content)");
    const long = messageLabel("word ".repeat(40));
    expect(long.length).toBeLessThanOrEqual(80);
    expect(long.endsWith("…")).toBe(true);
  });

  it("names a step by what it does", () => {
    const none = { hasThinking: false, hasToolCall: false, hasToolResult: false, hasOutput: false, toolName: null };
    expect(stepLabel({ ...none, hasToolCall: true, toolName: "search_flights", hasThinking: true })).toBe("tool_call search_flights");
    expect(stepLabel({ ...none, hasToolResult: true })).toBe("tool_result");
    expect(stepLabel({ ...none, hasThinking: true })).toBe("thinking");
    expect(stepLabel({ ...none, hasOutput: true, hasThinking: true })).toBe("output");
  });
});
