/**
 * Issue 33 on the served app: input nobody bounded must not stall the server (a concurrent health read
 * answers within 1 s while each hostile cell, schema, export and body is handled, and each gets a 4xx or
 * a failed cell with its reason, never a 5xx), and every judge call is counted (the run's tokens equal
 * what the judge double billed, @GOAL extractions included; a capped run's calls go past the cap by at
 * most the calls in flight when it was reached, each counted).
 */
import { gzipSync } from "node:zlib";
import { sharedStreamZip } from "@/lib/testing/import/zip-bomb";
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { check, importDataset, startRun, waitFinal, waitUntil, type Check } from "./data";
import type { TurnscopeServer } from "./server";

/** Run `act` while reading /api/health every 50 ms; the slowest read's time comes back with the act's result. */
async function whileReading<T>(server: TurnscopeServer, act: () => Promise<T>): Promise<{ result: T; slowestMs: number; reads: number; fivexx: number }> {
  let done = false;
  let slowestMs = 0;
  let reads = 0;
  let fivexx = 0;
  const poll = (async () => {
    while (!done) {
      const res = await server.request("GET", "/api/health");
      reads++;
      if (res.status >= 500) fivexx++;
      slowestMs = Math.max(slowestMs, res.ms);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  try {
    return { result: await act(), slowestMs: Math.round(slowestMs), reads, fivexx };
  } finally {
    done = true;
    await poll;
  }
}

const conversation = (content: string, i: number) => ({ name: `hostile ${i}`, messages: [{ role: "user", content: "go" }, { role: "assistant", content }] });

export async function boundsSection(server: TurnscopeServer, double: JudgeDouble) {
  const checks: Check[] = [];
  const figures: Record<string, unknown> = {};

  // 1–3: check cells over a 1 MB message, a hostile fence and 30,000 items.
  const texts = ["a".repeat(1_000_000), `\`\`\`${"\n".repeat(400_000)}x`, JSON.stringify(Array.from({ length: 30_000 }, (_, i) => ({ i })))];
  const { datasetId } = await importDataset(server, `bounds-${Date.now()}`, { conversations: texts.map(conversation) });
  const metric = async (name: string, check: unknown) =>
    (await server.request("POST", "/api/evaluation-pipeline-nodes", { dataset_id: datasetId, name, kind: "check", evaluation_level: "message", check })).json?.id as number;
  const regex = await metric("regex", { type: "text_regex", params: { pattern: ".{0,490}X", flags: "i" } });
  await metric("json", { type: "valid_json", params: {} });
  await metric("unique", { type: "json_schema", params: { schema: { type: "array", uniqueItems: true } } });
  const cells = await whileReading(server, async () => {
    const run = await startRun(server, { dataset_id: datasetId, execution_mode: "async" });
    return await waitFinal(server, run.id, 120_000);
  });
  figures.check_cells = { slowest_health_ms: cells.slowestMs, reads: cells.reads, status: cells.result.status };
  check(checks, "a health read answers within 1 s while regex, fence and uniqueItems cells over 1 MB are checked", cells.slowestMs < 1000 && cells.fivexx === 0, figures.check_cells);
  const results = await server.request("GET", `/api/evaluation-pipeline-executions/${cells.result.id}/results?limit=100`);
  const regexCells = (results.json?.results ?? []).filter((r: { pipeline_node_id: number }) => r.pipeline_node_id === regex);
  const stopped = regexCells.find((r: { error: string | null }) => /time budget of \d+ ms \(CHECK_TIMEOUT_MS\)/.test(r.error ?? ""));
  check(checks, "the regex cell over 1 MB fails naming its time budget", Boolean(stopped), regexCells.map((r: { status: string; error: string | null }) => [r.status, r.error]));

  // 4: a JSON Schema of 3,000 patterns (169 KB) is refused before it is compiled.
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 3000; i++) properties[`p${i}`] = { type: "string", pattern: `^[a-z]{0,40}x${i}$` };
  const schema = await whileReading(server, () =>
    server.request("POST", "/api/evaluation-pipeline-nodes", { dataset_id: datasetId, name: "huge schema", kind: "check", evaluation_level: "message", check: { type: "json_schema", params: { schema: { type: "object", properties } } } }),
  );
  check(checks, "a 169 KB JSON Schema is refused with 422 naming the limit, reads answering within 1 s", schema.result.status === 422 && schema.result.text.includes("32 KB") && schema.slowestMs < 1000, { status: schema.result.status, ms: Math.round(schema.result.ms), slowest_health_ms: schema.slowestMs });

  // 5: an OTLP export of 8 million rejected spans in a small gzip body.
  const spans = gzipSync(Buffer.from(`{"resourceSpans":[{"scopeSpans":[{"spans":[${Array(8_000_000).fill("0").join(",")}]}]}]}`));
  const otlp = await whileReading(server, async () => {
    const res = await fetch(`${server.baseUrl}/api/otel/v1/traces`, { method: "POST", headers: { ...server.authHeaders(), "content-type": "application/json", "content-encoding": "gzip" }, body: new Uint8Array(spans) });
    await res.arrayBuffer();
    return res;
  });
  check(checks, `an OTLP body of 8 M spans (${spans.length} bytes gzipped) is refused with 413, reads answering within 1 s`, otlp.result.status === 413 && otlp.slowestMs < 1000, { status: otlp.result.status, slowest_health_ms: otlp.slowestMs });

  // 7: a 20 MB JSON body.
  const body = await server.request("POST", "/api/datasets", { name: "x".repeat(20 * 1024 * 1024) });
  check(checks, "a 20 MB JSON body is refused with 413 naming MAX_JSON_BODY_BYTES", body.status === 413 && body.text.includes("MAX_JSON_BODY_BYTES"), { status: body.status, body: body.text.slice(0, 200) });

  // Issue 48, findings 8–10 and 12 on the served app: each refused with a 4xx naming its limit, reads answering meanwhile.
  {
    const form = new FormData();
    form.set("file", new Blob([Buffer.from(sharedStreamZip(40, 64 * 1024 * 1024))]), "bomb.eval");
    form.set("name", "zip bomb");
    const bomb = await whileReading(server, () => server.request("POST", "/api/datasets/import", form));
    figures.zip_bomb = { status: bomb.result.status, ms: Math.round(bomb.result.ms), slowest_health_ms: bomb.slowestMs };
    check(checks, "a 62 KB .eval of 40 members sharing one 64 MB deflate stream is refused with 413 at once, reads answering within 1 s", bomb.result.status === 413 && bomb.slowestMs < 1000 && bomb.fivexx === 0, figures.zip_bomb);

    const depth = 8 * 1024 * 1024 - 20;
    const nested = gzipSync(Buffer.from(`{"resourceSpans":[],"x":${"[".repeat(depth)}${"]".repeat(depth)}}`));
    const deep = await whileReading(server, async () => {
      const res = await fetch(`${server.baseUrl}/api/otel/v1/traces`, { method: "POST", headers: { ...server.authHeaders(), "content-type": "application/json", "content-encoding": "gzip" }, body: new Uint8Array(nested) });
      return { status: res.status, text: await res.text() };
    });
    figures.otlp_nesting = { status: deep.result.status, gzip_bytes: nested.length, slowest_health_ms: deep.slowestMs };
    check(checks, `a ${nested.length}-byte gzip of 16 MiB of nested arrays to the trace receiver: 400 naming MAX_JSON_DEPTH, reads answering within 1 s`, deep.result.status === 400 && deep.result.text.includes("MAX_JSON_DEPTH") && deep.slowestMs < 1000, figures.otlp_nesting);

    const levels = 524_268;
    const body = await whileReading(server, async () => {
      const res = await fetch(`${server.baseUrl}/api/datasets`, { method: "POST", headers: { ...server.authHeaders(), "content-type": "application/json" }, body: `{"name":"deep","description":${"[".repeat(levels)}${"]".repeat(levels)}}` });
      return { status: res.status, text: await res.text() };
    });
    figures.body_nesting = { status: body.result.status, slowest_health_ms: body.slowestMs };
    check(checks, "a 1 MiB body of 524,268 nested arrays: 400 naming MAX_JSON_DEPTH, reads answering within 1 s", body.result.status === 400 && body.result.text.includes("MAX_JSON_DEPTH") && body.slowestMs < 1000, figures.body_nesting);

    const tools = await server.request("POST", "/api/evaluation-pipeline-nodes", { dataset_id: datasetId, name: "many tools", kind: "check", evaluation_level: "conversation", check: { type: "tool_sequence", params: { tools: Array.from({ length: 20_000 }, (_, i) => `t${i}`), contiguous: true } } });
    check(checks, "a tool_sequence check of 20,000 tools is refused with 422", tools.status === 422, { status: tools.status, body: tools.text.slice(0, 200) });
  }

  // 11: every call counted — @GOAL extraction included.
  const goalMetric = async (id: number) => {
    const res = await server.request("POST", "/api/evaluation-pipeline-nodes", { dataset_id: id, name: "goal reached", evaluation_level: "conversation", output_type: "progress", prompt: "Did the assistant reach the user's goal (@GOAL)?\n@HISTORY" });
    if (res.status !== 201) throw new Error(`metric: ${res.status} ${res.text}`);
  };
  const counted = (await importDataset(server, `counted-${Date.now()}`, { conversations: Array.from({ length: 20 }, (_, i) => ({ name: `c${i}`, messages: [{ role: "user", content: `I need help with order ${i} (${Date.now()})` }, { role: "assistant", content: `Order ${i} is on its way.` }] })) })).datasetId;
  await goalMetric(counted);
  double.reset();
  const run = await startRun(server, { dataset_id: counted, execution_mode: "async", batch_size: 8 });
  const done = (await server.request("GET", `/api/evaluation-pipeline-executions/${(await waitFinal(server, run.id, 60_000)).id}`)).json;
  const billed = double.stats().billed;
  figures.counted = { replies: billed.replies, billed_input: billed.prompt_tokens, billed_output: billed.completion_tokens, run_input: done.meta?.input_tokens, run_output: done.meta?.output_tokens };
  check(checks, "a run's tokens are what the provider billed, its 20 goal extractions included (40 replies)", billed.replies === 40 && done.meta?.input_tokens === billed.prompt_tokens && done.meta?.output_tokens === billed.completion_tokens, figures.counted);

  {
    // $1 per 1,000 tokens (JUDGE_PRICES of the suite's server): the cap is about six replies' worth.
    const capped = (await importDataset(server, `capped-${Date.now()}`, { conversations: Array.from({ length: 40 }, (_, i) => ({ name: `c${i}`, messages: [{ role: "user", content: `Please track parcel ${i} (${Date.now()})` }, { role: "assistant", content: `Parcel ${i} arrives tomorrow.` }] })) })).datasetId;
    await goalMetric(capped);
    double.reset();
    const cap = 0.6;
    const batch = 8;
    const cappedRun = await startRun(server, { dataset_id: capped, execution_mode: "async", batch_size: batch, max_cost_usd: cap });
    await waitFinal(server, cappedRun.id, 60_000);
    // A queued run ends for its budget while calls it sent are still out; each reply that lands later is
    // added to its tokens without a result (meta.unsaved_replies): read the run once none is out and the
    // last is counted (or 10 s have passed).
    const each = double.billedReplies();
    const billedSoFar = () => double.billedReplies().reduce((n, r) => n + r.prompt_tokens, 0);
    let end = (await server.request("GET", `/api/evaluation-pipeline-executions/${cappedRun.id}`)).json;
    await waitUntil(
      "the capped run's late replies counted",
      async () => {
        end = (await server.request("GET", `/api/evaluation-pipeline-executions/${cappedRun.id}`)).json;
        return double.inFlight() === 0 && end.meta?.input_tokens === billedSoFar();
      },
      10_000,
    ).catch(() => undefined);
    each.splice(0, each.length, ...double.billedReplies());
    let spent = 0;
    let afterCap = 0;
    for (const r of each) {
      if (spent >= cap) afterCap++;
      spent += (r.prompt_tokens + r.completion_tokens) / 1000;
    }
    const billedInput = each.reduce((n, r) => n + r.prompt_tokens, 0);
    figures.capped = { replies: each.length, replies_after_cap: afterCap, batch_size: batch, status: end.status, stop_reason: end.meta?.stop_reason, run_input: end.meta?.input_tokens, billed_input: billedInput, cost_usd: end.meta?.cost_usd };
    check(checks, "a capped run stops for its budget, every reply counted in its tokens", end.status === "cancelled" && end.meta?.stop_reason === "budget" && end.meta?.input_tokens === billedInput, figures.capped);
    // Only the calls out when the cap was reached go past it, in process and queued alike: a queued run's
    // batches in one process count each other's replies that landed and wait for their save.
    check(checks, "past the cap only calls already in flight (≤ batch_size)", afterCap <= batch, figures.capped);
  }
  return { checks, figures };
}
