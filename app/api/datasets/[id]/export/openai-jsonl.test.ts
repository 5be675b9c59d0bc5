/**
 * `GET /datasets/{id}/export?format=openai_jsonl`: each conversation as one OpenAI chat-format line
 * (`{messages, tools, metadata, name}`), ready for fine-tuning or another evaluator, imported again through the
 * import route with equal counts; a grid filter keeps only the conversations it matches.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { importFile as importAs } from "@/lib/testing/import/import-file";
import * as exportRoute from "./route";

const sample = (name: string) => fs.readFileSync(path.join(process.cwd(), "e2e/fixtures/formats", name), "utf8");

type Step = { thinking: string | null; tool_call: unknown; tool_result: unknown; output_content: string | null };
type Conversation = { name: string | null; meta: unknown; agents: unknown; messages: Array<{ role: string; content: string | null; steps: Step[] }> };

const importFile = (text: string, filename: string) => importAs<Conversation>(text, filename);

const counts = (cs: Conversation[]) => {
  const steps = cs.flatMap((c) => c.messages.flatMap((m) => m.steps));
  return {
    conversations: cs.length,
    messages: cs.reduce((n, c) => n + c.messages.length, 0),
    steps: steps.length,
    calls: steps.filter((s) => s.tool_call !== null).length,
    results: steps.filter((s) => s.tool_result !== null).length,
    thinking: steps.filter((s) => s.thinking !== null).length,
  };
};
const shape = (cs: Conversation[]) =>
  cs.map((c) => c.messages.map((m) => ({ role: m.role, content: m.content, steps: m.steps.map((s) => ({ thinking: s.thinking, tool_call: s.tool_call, tool_result: s.tool_result, output_content: s.output_content })) })));

async function download(id: number, query: string) {
  return exportRoute.GET(new Request(`http://localhost/api/datasets/${id}/export${query}`), { params: Promise.resolve({ id: String(id) }) });
}

type Line = { messages: Array<Record<string, unknown>>; tools?: Array<Record<string, unknown>>; metadata?: Record<string, unknown>; name?: string };

describe("OpenAI chat-format JSON Lines export", () => {
  it("writes tool calls as tool_calls with paired tool messages, tools declared, meta kept apart, and imports again with equal counts", async () => {
    const chat = {
      conversations: [
        {
          name: "Flights",
          meta: { reward: 1, task: { id: "t-1" } },
          agents: [{ name: "assistant", tools: { search_flights: { name: "search_flights", parameters: { type: "object", properties: { to: { type: "string" } } } } } }],
          messages: [
            { role: "system", content: "You book flights." },
            { role: "user", content: "Flights to Lisbon?" },
            {
              role: "assistant",
              content: "TP218 at 18:05.",
              steps: [
                { thinking: "Search first." },
                { tool_call: { id: "call_1", name: "search_flights", arguments: { to: "LIS" } } },
                { tool_call: { id: "call_2", name: "search_flights", arguments: { to: "OPO" } } },
                { tool_result: { flights: ["TP218"] } },
                { tool_result: "none" },
                { output_content: "TP218 at 18:05." },
              ],
            },
            { role: "user", content: "Thanks" },
            { role: "assistant", content: "You're welcome." },
          ],
        },
      ],
    };
    const atif = await importFile(sample("atif-trajectory.json"), "atif.json");
    const first = await importFile(JSON.stringify(chat), "chat.json");
    // Both datasets' conversations: a chat with parallel calls, and an agent trajectory with reasoning and metrics.
    for (const source of [first, atif]) {
      const res = await download(source.datasetId, "?format=openai_jsonl");
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
      expect(res.headers.get("content-disposition")).toBe(`attachment; filename="dataset-${source.datasetId}.openai.jsonl"`);
      const text = await res.text();
      const again = await importFile(text, "again.jsonl");
      expect(counts(again.conversations)).toEqual(counts(source.conversations));
      expect(shape(again.conversations)).toEqual(shape(source.conversations));
      expect(again.conversations.map((c) => c.meta)).toEqual(source.conversations.map((c) => c.meta));
    }

    const [line] = (await (await download(first.datasetId, "?format=openai_jsonl")).text()).trimEnd().split("\n").map((l) => JSON.parse(l) as Line);
    expect(line.name).toBe("Flights");
    expect(line.metadata).toEqual({ reward: 1, task: { id: "t-1" } });
    expect(line.tools).toEqual([{ type: "function", function: { name: "search_flights", parameters: { type: "object", properties: { to: { type: "string" } } } } }]);
    expect(line.messages).toEqual([
      { role: "system", content: "You book flights." },
      { role: "user", content: "Flights to Lisbon?" },
      {
        role: "assistant",
        content: null,
        reasoning_content: "Search first.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "search_flights", arguments: '{"to":"LIS"}' } },
          { id: "call_2", type: "function", function: { name: "search_flights", arguments: '{"to":"OPO"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"flights":["TP218"]}' },
      { role: "tool", tool_call_id: "call_2", content: "none" },
      { role: "assistant", content: "TP218 at 18:05." },
      { role: "user", content: "Thanks" },
      { role: "assistant", content: "You're welcome." },
    ]);
  });

  it("exports the conversations a grid filter keeps, in grid order", async () => {
    const lines = [1, 0, 1].map((reward, i) => JSON.stringify({ metadata: { reward, n: i }, messages: [{ role: "user", content: `q${i}` }, { role: "assistant", content: `a${i}` }] }));
    const { datasetId } = await importFile(lines.join("\n"), "three.jsonl");
    const res = await download(datasetId, `?format=openai_jsonl&filter=${encodeURIComponent("meta.reward==1")}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="dataset-${datasetId}-filtered.openai.jsonl"`);
    const out = (await res.text()).trimEnd().split("\n").map((l) => JSON.parse(l) as Line);
    expect(out.map((l) => l.metadata)).toEqual([{ reward: 1, n: 0 }, { reward: 1, n: 2 }]);
    expect(out[0].messages).toEqual([{ role: "user", content: "q0" }, { role: "assistant", content: "a0" }]);
    // A filter matching nothing gives an empty file, not an error.
    const none = await download(datasetId, `?format=openai_jsonl&filter=${encodeURIComponent("meta.reward==7")}`);
    expect(none.status).toBe(200);
    expect(await none.text()).toBe("");
  });
});
