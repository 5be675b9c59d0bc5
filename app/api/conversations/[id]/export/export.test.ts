/**
 * ATIF in and out through the API: an ATIF trajectory (e2e/fixtures/formats/atif-trajectory.json, written from the
 * specification in the shape real Harbor files have) imported, exported as ATIF (one conversation, and the dataset
 * as JSON Lines, whole or through a grid filter), and the export imported again: every turn, call and result kept.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { importFile as importAs } from "@/lib/testing/import/import-file";
import * as datasetExport from "@/app/api/datasets/[id]/export/route";
import * as exportRoute from "./route";

const fixture = fs.readFileSync(path.join(process.cwd(), "e2e/fixtures/formats/atif-trajectory.json"), "utf8");

type Step = { thinking: string | null; tool_call: { id?: string; name: string; arguments: unknown } | null; tool_result: unknown; output_content: string | null; model_name: string | null };
type Message = { role: string; content: string | null; meta: Record<string, unknown> | null; steps: Step[] };
type Conversation = { id: number; name: string | null; meta: Record<string, unknown>; agents: unknown; messages: Message[] };

const importFile = (text: string, filename: string) => importAs<Conversation>(text, filename);

/** What a round trip must keep: each message's role, text and steps (calls with their ids and arguments, results, reasoning, output). */
const shape = (cs: Conversation[]) =>
  cs.map((c) => c.messages.map((m) => ({ role: m.role, content: m.content, steps: m.steps.map((s) => ({ thinking: s.thinking, tool_call: s.tool_call, tool_result: s.tool_result, output_content: s.output_content })) })));
const counts = (cs: Conversation[]) => {
  const steps = cs.flatMap((c) => c.messages.flatMap((m) => m.steps));
  return { conversations: cs.length, messages: cs.reduce((n, c) => n + c.messages.length, 0), steps: steps.length, calls: steps.filter((s) => s.tool_call).length, results: steps.filter((s) => s.tool_result !== null).length };
};

async function exportConversation(id: number | string, query = "?format=atif") {
  return exportRoute.GET(new Request(`http://localhost/api/conversations/${id}/export${query}`), { params: Promise.resolve({ id: String(id) }) });
}

async function exportDataset(id: number, query: string) {
  return datasetExport.GET(new Request(`http://localhost/api/datasets/${id}/export${query}`), { params: Promise.resolve({ id: String(id) }) });
}

describe("ATIF import", () => {
  it("reads steps, reasoning, calls with their results in call order, metrics and the agent", async () => {
    const { outcome, conversations } = await importFile(fixture, "trajectory.json");
    expect(outcome).toMatchObject({ format: "atif", conversations_imported: 1, messages_imported: 5, steps_imported: 10 });
    expect(outcome.records.in_file).toBe(7);
    // The reward's 1.0 is stored as the number 1: said, not hidden.
    expect(outcome.not_imported).toEqual([{ path: "extra.reward", characters: 3, reason: "re-serialised: 1.0 stored as 1" }]);
    const [c] = conversations;
    expect(c.meta).toMatchObject({
      schema_version: "ATIF-v1.6",
      session_id: "4f1c2a9e-7b3d-4e51-9a0c-2d8e6b1f3c77",
      agent: { name: "terminus-2", version: "2.1.0", model_name: "openai/gpt-5-mini" },
      final_metrics: { total_prompt_tokens: 8711, total_cost_usd: 0.00205 },
      extra: { task_id: "fix-date-parsing", reward: 1 },
    });
    // The tool definitions are the agent's tools, so calls are checked against them.
    expect(c.agents).toEqual([{ name: "terminus-2", tools: [expect.objectContaining({ type: "function" }), expect.objectContaining({ type: "function" })] }]);
    expect(c.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant"]);
    const turn = c.messages[2];
    expect(turn.content).toBe("parse_date only accepts day/month/year, but the test passes an ISO date (2026-03-02).");
    expect(turn.steps.map((s) => (s.thinking ? "thinking" : s.tool_call ? `call ${s.tool_call.id}` : s.tool_result !== null ? `result ${String(s.tool_result).slice(0, 12)}` : "output"))).toEqual([
      "thinking",
      "output",
      "call call_k2",
      "call call_k3",
      // The observation listed call_k3's result first: stored in the order of the calls they answer.
      "result F.\nE   Value",
      "result def parse_da",
      "output",
    ]);
    expect(turn.steps[0].model_name).toBe("openai/gpt-5-mini");
    // Each agent step's metrics are kept, and where each one's steps begin.
    expect(turn.meta).toMatchObject({ metrics: { prompt_tokens: 1840, cached_tokens: 1024 }, reasoning_effort: "medium" });
    expect((turn.meta?.turn_messages as Array<{ first_step: number; meta: Record<string, unknown> }>).map((t) => [t.first_step, t.meta.metrics])).toEqual([
      [0, { prompt_tokens: 1840, completion_tokens: 212, cached_tokens: 1024, cost_usd: 0.00061, extra: { reasoning_tokens: 96 } }],
      [6, { prompt_tokens: 2190, completion_tokens: 41, cached_tokens: 1792, cost_usd: 0.00022 }],
    ]);
    // A step's own model names its steps; the agent's model the others.
    expect(c.messages[4].steps[0]).toMatchObject({ tool_call: { name: "run_shell", id: "call_k4" }, model_name: "openai/gpt-5" });
  });

  it("a trajectory exported as ATIF imports again with every turn, call and result (and its metrics)", async () => {
    const first = await importFile(fixture, "trajectory.json");
    const res = await exportConversation(first.conversations[0].id);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="conversation-${first.conversations[0].id}.atif.json"`);
    const trajectory = (await res.json()) as { schema_version: string; agent: Record<string, unknown>; steps: Array<Record<string, unknown>>; final_metrics: unknown };
    expect(trajectory.schema_version).toBe("ATIF-v1.6");
    expect(trajectory.agent).toMatchObject({ name: "terminus-2", version: "2.1.0", model_name: "openai/gpt-5-mini", tool_definitions: expect.any(Array) });
    // The same seven steps, the parallel calls' results paired by id.
    expect(trajectory.steps.map((s) => [s.step_id, s.source])).toEqual([[1, "system"], [2, "user"], [3, "agent"], [4, "agent"], [5, "user"], [6, "agent"], [7, "agent"]]);
    expect(trajectory.steps[2]).toMatchObject({
      reasoning_content: "Two things at once: the test output and the source of parse_date.",
      tool_calls: [{ tool_call_id: "call_k2", function_name: "run_shell" }, { tool_call_id: "call_k3", function_name: "read_file" }],
      observation: { results: [{ source_call_id: "call_k2" }, { source_call_id: "call_k3" }] },
      metrics: { prompt_tokens: 1840 },
    });
    expect(trajectory.steps[5]).toMatchObject({ model_name: "openai/gpt-5", message: "" });
    expect(trajectory.final_metrics).toMatchObject({ total_steps: 7 });

    const second = await importFile(JSON.stringify(trajectory), "again.json");
    expect(second.outcome.format).toBe("atif");
    expect(counts(second.conversations)).toEqual(counts(first.conversations));
    expect(counts(second.conversations)).toEqual({ conversations: 1, messages: 5, steps: 10, calls: 3, results: 3 });
    expect(shape(second.conversations)).toEqual(shape(first.conversations));
    expect(second.conversations[0].messages[2].meta?.metrics).toEqual(first.conversations[0].messages[2].meta?.metrics);
  });

  it("a dataset exports as ATIF JSON Lines, whole or filtered, and imports again with equal counts", async () => {
    const other = JSON.parse(fixture) as { session_id: string; extra: Record<string, unknown> };
    other.session_id = "second-run";
    other.extra = { task_id: "fix-date-parsing", reward: 0 };
    const first = await importFile(`${fixture.replace(/\n\s*/g, " ")}\n${JSON.stringify(other)}\n`, "two.jsonl");
    expect(first.outcome.format).toBe("atif");
    expect(first.conversations).toHaveLength(2);

    const whole = await exportDataset(first.datasetId, "?format=atif");
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    expect(whole.headers.get("content-disposition")).toBe(`attachment; filename="dataset-${first.datasetId}.atif.jsonl"`);
    const text = await whole.text();
    expect(text.trimEnd().split("\n")).toHaveLength(2);
    const again = await importFile(text, "dataset.atif.jsonl");
    expect(again.outcome.format).toBe("atif");
    expect(counts(again.conversations)).toEqual(counts(first.conversations));
    expect(shape(again.conversations)).toEqual(shape(first.conversations));
    expect(again.conversations.map((c) => c.meta.session_id)).toEqual(["4f1c2a9e-7b3d-4e51-9a0c-2d8e6b1f3c77", "second-run"]);

    const filtered = await exportDataset(first.datasetId, `?format=atif&filter=${encodeURIComponent("meta.extra.reward==0")}`);
    expect(filtered.status).toBe(200);
    const lines = (await filtered.text()).trimEnd().split("\n").map((l) => JSON.parse(l) as { session_id: string });
    expect(lines.map((l) => l.session_id)).toEqual(["second-run"]);
  });

  it("a conversation not shaped by ATIF (parallel calls, a call holding its result, consecutive assistant messages) comes back the same", async () => {
    const conversations = {
      conversations: [
        {
          name: "Refund",
          description: "Customer asks for a refund",
          meta: { channel: "web", reward: 0.5 },
          agents: [{ name: "support", tools: { lookup_order: { name: "lookup_order", parameters: { type: "object", properties: { id: { type: "string" } } } } } }],
          messages: [
            { role: "user", content: "Refund order 7?", meta: { locale: "en" } },
            {
              role: "assistant",
              content: "Refunded.",
              steps: [
                { thinking: "Look it up first." },
                { tool_call: { name: "lookup_order", arguments: { id: "7" } }, tool_result: { status: "paid" }, model_name: "m1" },
                { output_content: "Refunded.", agent_name: "support" },
              ],
            },
            { role: "assistant", content: "Anything else?", steps: [{ output_content: "Anything else?" }] },
            { role: "tool", content: "audit logged" },
            { role: "assistant", content: null },
          ],
        },
      ],
    };
    const first = await importFile(JSON.stringify(conversations), "refund.json");
    const res = await exportConversation(first.conversations[0].id, "");
    expect(res.status).toBe(200);
    const again = await importFile(await res.text(), "refund.atif.json");
    expect(counts(again.conversations)).toEqual(counts(first.conversations));
    expect(shape(again.conversations)).toEqual(shape(first.conversations));
    const [c] = again.conversations;
    expect(c).toMatchObject({ name: "Refund", meta: { channel: "web", reward: 0.5 } });
    expect(c.messages[0].meta).toEqual({ locale: "en" });
  });

  it("refuses what it cannot export with the API's errors", async () => {
    expect((await exportConversation(999_999)).status).toBe(404);
    expect((await exportConversation("x")).status).toBe(400);
    expect((await exportConversation(1, "?format=csv")).status).toBe(400);
    expect((await exportDataset(999_999, "?format=atif")).status).toBe(404);
    const { datasetId } = await importFile(fixture, "t.json");
    const unknownMetric = await exportDataset(datasetId, `?format=openai_jsonl&filter=${encodeURIComponent("metric.999999==pass")}`);
    expect(unknownMetric.status).toBe(422);
    const gridWithFilter = await exportDataset(datasetId, `?format=csv&filter=${encodeURIComponent("meta.x==1")}`);
    expect(gridWithFilter.status).toBe(422);
    expect(((await gridWithFilter.json()) as { error: { message: string } }).error.message).toContain("filter is for atif and openai_jsonl");
  });
});
