/**
 * Issue 53.1: the MCP server at /api/mcp driven by the SDK's own client (Client + StreamableHTTPClientTransport)
 * over real HTTP, the route handler behind a server, runs judged by the judge test double. An annotator's key
 * lists the tools, finds a dataset, runs a metric to its end and reads its aggregate; a viewer's key reads
 * but the same run is refused (403, as POST /run refuses it); no key is refused (401).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as openapi from "@/app/api/openapi.json/route";
import * as users from "@/app/api/users/route";
import * as userKeys from "@/app/api/users/[id]/keys/route";
import { createMetric } from "@/lib/metrics";
import { call } from "@/lib/testing/http/call";
import { serveRoutes, type RouteServer } from "@/lib/testing/http/route-server";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import { loadSampleDataset } from "@/lib/testing/seed/sample";
import * as mcp from "./route";

// Prices, so that a run can be priced and held to a budget.
const judge = withJudgeDouble({ JUDGE_MAX_RETRIES: "0", JUDGE_HEDGE: "false", JUDGE_PRICES: JSON.stringify({ "gpt-4o-mini": { input: 1000, output: 1000 } }) });

let server: RouteServer;
const keys = { admin: "", annotator: "", viewer: "" };
const clients: Client[] = [];

beforeAll(async () => {
  server = await serveRoutes({ "/api/mcp": (req) => (req.method === "POST" ? mcp.POST(req) : mcp.GET(req)) }, { record: false });
  for (const role of ["admin", "annotator", "viewer"] as const) {
    const auth: Record<string, string> = keys.admin ? { authorization: `Bearer ${keys.admin}` } : {};
    const user = await call(users.POST, "POST", "/api/users", { body: { name: `mcp-${role}`, role }, headers: auth });
    expect(user.status).toBe(201);
    const key = await call(userKeys.POST, "POST", "/api/users/x/keys", { params: { id: user.json.id }, headers: auth });
    expect(key.status).toBe(201);
    keys[role] = key.json.key;
  }
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await server.close();
});

async function connect(key?: string): Promise<Client> {
  const client = new Client({ name: "turnscope-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.baseURL}/api/mcp`), {
    requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A tool's answer: the parsed JSON of its text, and whether it is an error. */
async function tool(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content[0]?.type === "text" ? result.content[0].text : "";
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test convenience: assertions index into arbitrary JSON
  return { isError: result.isError === true, json: JSON.parse(text) as any, structured: result.structuredContent };
}

async function sampleWithMetric(name: string) {
  const sample = await loadSampleDataset({ name });
  const metric = await createMetric({ dataset_id: sample.datasetId, name: "Goal met", evaluation_level: "conversation", prompt: "Did the assistant meet the user's goal?", output_type: "progress" });
  return { datasetId: sample.datasetId, metricId: metric.id };
}

describe("MCP at /api/mcp", () => {
  it("an annotator lists the tools, finds the dataset, runs a metric to its end and reads its aggregate and results", async () => {
    const { datasetId, metricId } = await sampleWithMetric("MCP sample · refunds");
    const client = await connect(keys.annotator);

    const listed = await client.listTools();
    const names = listed.tools.map((t) => t.name);
    for (const fixed of ["list_datasets", "search_conversations", "get_conversation", "list_metrics", "estimate_run", "start_run", "get_run", "get_results", "compare_runs", "start_generation", "gate"]) {
      expect(names).toContain(fixed);
    }
    const startRun = listed.tools.find((t) => t.name === "start_run")!;
    expect(startRun.inputSchema.required).toEqual(["dataset_id"]);
    expect(startRun.annotations?.readOnlyHint).toBe(false);

    const found = await tool(client, "list_datasets", { name: "mcp SAMPLE" });
    expect(found.isError).toBe(false);
    expect(found.json).toMatchObject({ total: 1, next_offset: null, datasets: [{ id: datasetId, name: "MCP sample · refunds", conversations: 5 }] });

    const conversations = await tool(client, "search_conversations", { dataset_id: datasetId, limit: 2 });
    expect(conversations.json).toMatchObject({ total: 5, offset: 0, next_offset: 2 });
    expect(conversations.json.conversations).toHaveLength(2);

    const metrics = await tool(client, "list_metrics", { dataset_id: datasetId });
    expect(metrics.json.metrics).toEqual([expect.objectContaining({ id: metricId, name: "Goal met", level: "conversation", output_type: "progress" })]);

    const estimate = await tool(client, "estimate_run", { dataset_id: datasetId, pipeline_node_id: metricId });
    expect(estimate.json).toMatchObject({ cells: 5, judge_calls: 5, cached: 0 });
    expect(estimate.json.estimated_cost_usd).toBeGreaterThan(0);

    const started = await tool(client, "start_run", { dataset_id: datasetId, pipeline_node_id: metricId, execution_mode: "async" });
    expect(started.isError).toBe(false);
    expect(started.json).toMatchObject({ dataset_id: datasetId, total: 5 });
    const runId: number = started.json.id;

    let run = await tool(client, "get_run", { id: runId, wait_seconds: 30 });
    for (let i = 0; i < 5 && run.json.status !== "completed"; i++) run = await tool(client, "get_run", { id: runId, wait_seconds: 30 });
    expect(run.json).toMatchObject({ id: runId, status: "completed", total: 5, successful: 5, failed: 0, progress: { saved: 5, total: 5, done: true } });
    const aggregate = run.json.aggregated[String(metricId)];
    expect(aggregate).toMatchObject({ metric: "Goal met", output_type: "progress", total: 5 });
    expect(aggregate.average_score).toBeGreaterThanOrEqual(0);
    expect(aggregate.average_score).toBeLessThanOrEqual(1);
    expect(Object.values(aggregate.distribution as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(5);

    const first = await tool(client, "get_results", { id: runId, limit: 3 });
    expect(first.json).toMatchObject({ execution_id: runId, total: 5, next_offset: 3 });
    expect(first.json.results[0]).toMatchObject({ pipeline_node_id: metricId, entity_type: "conversation", status: "completed" });
    expect(typeof first.json.results[0].value).toBe("number");
    const rest = await tool(client, "get_results", { id: runId, limit: 3, offset: 3 });
    expect(rest.json.results).toHaveLength(2);
    expect(rest.json.next_offset).toBeNull();

    // Conversations found in the grid's language, each with the metric's latest verdict.
    const scored = await tool(client, "search_conversations", { dataset_id: datasetId, filter: `metric.${metricId}>=0`, sort: `-metric.${metricId}`, limit: 5 });
    expect(scored.json.total).toBe(5);
    const scores = scored.json.conversations.map((c: { verdicts: Record<string, number> }) => c.verdicts[String(metricId)]);
    expect(scores).toEqual([...scores].sort((x, y) => y - x));
    expect(scores.every((v: unknown) => typeof v === "number")).toBe(true);

    // A second run of the same cells: compared with the first, and the gate's verdict over it.
    const again = await tool(client, "start_run", { dataset_id: datasetId, pipeline_node_id: metricId, no_cache: true });
    expect((await tool(client, "get_run", { id: again.json.id, wait_seconds: 30 })).json.status).toBe("completed");
    const compared = await tool(client, "compare_runs", { a: runId, b: again.json.id, only_flips: false, limit: 2 });
    expect(compared.json.metrics[0]).toMatchObject({ pipeline_node_id: metricId, n: 5 });
    expect(compared.json).toMatchObject({ total: 5, next_offset: 2 });
    const gate = await tool(client, "gate", { runs: [again.json.id], baseline: runId, min: { [String(metricId)]: 0 } });
    expect(gate.isError).toBe(false);
    expect(gate.json.status).toBe("pass");
    expect(gate.json.metrics[0]).toMatchObject({ pipeline_node_id: metricId, cases: 5 });

    // A conversation, paged, and its transcript as a resource.
    const conversationId: number = conversations.json.conversations[0].id;
    const conversation = await tool(client, "get_conversation", { id: conversationId, message_limit: 1 });
    expect(conversation.json).toMatchObject({ id: conversationId, dataset_id: datasetId, next_message_offset: 1, transcript_uri: `turnscope://conversations/${conversationId}/transcript` });
    expect(conversation.json.messages).toHaveLength(1);
    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual(["turnscope://conversations/{id}/transcript"]);
    const transcript = await client.readResource({ uri: conversation.json.transcript_uri });
    const text = (transcript.contents[0] as { text: string }).text;
    expect(text).toMatch(/^\[system\]: .*\n\[user\]: /);
    expect(text).toContain("  - step 2 (travel_agent): tool_call: ");
  }, 60_000);

  it("tells a client that asks for progress how far a run has got while get_run waits (notifications/progress), then answers", async () => {
    const client = await connect(keys.annotator);
    const { datasetId, metricId } = await sampleWithMetric("mcp progress");
    // Slow cells, one at a time: the wait sees the run move.
    judge().setLatency(150);
    const started = await tool(client, "start_run", { dataset_id: datasetId, pipeline_node_id: metricId, execution_mode: "async", batch_size: 1, no_cache: true });
    expect(started.isError).toBe(false);
    const told: Array<{ progress: number; total?: number; message?: string }> = [];
    const result = (await client.callTool({ name: "get_run", arguments: { id: started.json.id, wait_seconds: 45 } }, undefined, {
      onprogress: (p) => told.push(p),
      timeout: 60_000,
    })) as CallToolResult;
    const run = JSON.parse(result.content[0]?.type === "text" ? result.content[0].text : "{}");
    expect(run.status).toBe("completed");
    const total = run.progress.total as number;
    expect(total).toBeGreaterThan(1);
    expect(told.length).toBeGreaterThanOrEqual(2);
    // A total once the run is planned (before, none is said), always the run's.
    expect(told.filter((p) => p.total !== undefined).every((p) => p.total === total)).toBe(true);
    // Each notification says more than the one before, the last the whole run.
    expect(told.map((p) => p.progress)).toEqual([...told.map((p) => p.progress)].sort((a, b) => a - b));
    expect(told.at(-1)).toMatchObject({ progress: total, message: expect.stringMatching(new RegExp(`^run ${started.json.id} completed: ${total} of ${total} cells$`)) });
    // A client that does not ask gets one JSON answer, as before.
    const plain = await fetch(`${server.baseURL}/api/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${keys.annotator}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "get_run", arguments: { id: started.json.id } } }),
    });
    expect(plain.headers.get("content-type")).toMatch(/^application\/json/);
    expect((await plain.json()).result.isError).toBeFalsy();
  });

  it("honours the budget: a run with max_cost_usd below one cell's cost ends cancelled for budget", async () => {
    const { datasetId, metricId } = await sampleWithMetric("MCP budget");
    const client = await connect(keys.annotator);
    const started = await tool(client, "start_run", { dataset_id: datasetId, pipeline_node_id: metricId, max_cost_usd: 0.000001 });
    expect(started.json.max_cost_usd).toBe(0.000001);
    const run = await tool(client, "get_run", { id: started.json.id, wait_seconds: 30 });
    expect(run.json).toMatchObject({ status: "cancelled", stop_reason: "budget" });
    expect(run.json.successful).toBeLessThan(5);
  }, 60_000);

  it("a viewer reads, but starting the same run is refused as the REST API refuses it (403 forbidden)", async () => {
    const { datasetId, metricId } = await sampleWithMetric("MCP viewer");
    const viewer = await connect(keys.viewer);
    expect((await tool(viewer, "list_datasets", { name: "MCP viewer" })).json.datasets).toHaveLength(1);
    for (const [name, args] of [
      ["start_run", { dataset_id: datasetId, pipeline_node_id: metricId }],
      ["estimate_run", { dataset_id: datasetId, pipeline_node_id: metricId }],
      ["start_generation", { source_dataset_id: datasetId, target_id: 1, mode: "replay" }],
    ] as const) {
      const refused = await tool(viewer, name, args);
      expect(refused.isError).toBe(true);
      expect(refused.json.error).toMatchObject({ code: "forbidden", message: expect.stringContaining("annotator") });
      expect(refused.structured).toEqual(refused.json);
    }
    // Nothing was started.
    const annotator = await connect(keys.annotator);
    const first = await tool(annotator, "start_run", { dataset_id: datasetId, pipeline_node_id: metricId });
    expect(first.json.id).toBeGreaterThan(0);
    const read = await tool(viewer, "get_run", { id: first.json.id, wait_seconds: 30 });
    expect(read.isError).toBe(false);
    expect(read.json.status).toBe("completed");
  }, 60_000);

  it("is in the OpenAPI document, which names every tool the server lists and the role it needs", async () => {
    const listed = await (await connect(keys.viewer)).listTools();
    const doc = (await call(openapi.GET, "GET", "/api/openapi.json", { headers: { authorization: `Bearer ${keys.viewer}` } })).json;
    const description: string = doc.paths["/mcp"].post.description;
    for (const t of listed.tools) expect(description).toMatch(new RegExp(`\`${t.name}\` \\((viewer|annotator)\\)`));
    expect(description).toContain("`start_run` (annotator)");
    expect(doc.paths["/mcp"].get.responses["405"]).toBeDefined();
  });

  it("refuses a request without a key (401), and a wrong key", async () => {
    for (const key of [undefined, "tsk_not-a-real-key"]) {
      const error = await connect(key).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StreamableHTTPError);
      expect((error as StreamableHTTPError).code).toBe(401);
    }
    const res = await fetch(`${server.baseURL}/api/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
    expect((await res.json()).error.code).toBe("unauthorized");
  });

  it("answers bad arguments and unknown ids with the API's errors", async () => {
    const client = await connect(keys.annotator);
    const bad = await tool(client, "start_run", { dataset_id: "seven" });
    expect(bad.isError).toBe(true);
    expect(bad.json.error).toMatchObject({ code: "bad_request", details: [expect.objectContaining({ path: "dataset_id" })] });
    const missing = await tool(client, "get_conversation", { id: 999999 });
    expect(missing.json.error).toEqual({ code: "not_found", message: "Conversation 999999 does not exist", details: [] });
    const noTarget = await tool(client, "start_generation", { source_dataset_id: 999999, target_id: 999999, mode: "replay" });
    expect(noTarget.json.error.code).toBe("not_found");
    const both = await tool(client, "search_conversations", { dataset_id: 1, name: "x", filter: "meta.a==1" });
    expect(both.json.error).toMatchObject({ code: "bad_request", details: [{ path: "name" }] });
    const nul = await tool(client, "list_datasets", { name: "a\u0000b" });
    expect(nul.json.error).toMatchObject({ code: "bad_request", details: [{ path: "name" }] });
    const filter = await tool(client, "search_conversations", { dataset_id: 999999, filter: "metric.1==pass" });
    expect(filter.json.error.code).toBe("not_found");
    await expect(client.readResource({ uri: "turnscope://conversations/999999/transcript" })).rejects.toThrow(/Conversation 999999 does not exist/);
    // GET opens no stream on a stateless server.
    const get = await fetch(`${server.baseURL}/api/mcp`, { headers: { authorization: `Bearer ${keys.viewer}`, accept: "text/event-stream" } });
    expect(get.status).toBe(405);
  });
});
