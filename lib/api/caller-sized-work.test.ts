/**
 * Issue 48, findings 8–12: work sized by the caller ran on the request loop. Each hostile input below is
 * sent through the route handlers while a health read (`GET /api/health`) is sent every 50 ms; the
 * slowest read must answer within 1 s, and the input get its answer (a 4xx naming the limit, or its
 * success) — never a 500. Before: a .eval archive of 20 members sharing one deflate stream 46.2 s; a
 * 16 KB gzip of nested arrays 6.5 s; a 1 MiB body of 524,268 nested arrays 0.9 s (201); imports under
 * the 50 MB limit 1.5–10 s; tool_sequence over 40,000 calls × 20,000 tools 2.2 s.
 */
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as datasets from "@/app/api/datasets/route";
import * as traces from "@/app/api/otel/v1/traces/route";
import { resetConfig } from "@/lib/config";
import { inputTasksStoppedForTime } from "@/lib/input-pool";
import { call } from "@/lib/testing/http/call";
import { healthReadBoundMs, whileReadingHealth } from "@/lib/testing/http/health-reads";
import { upload } from "@/lib/testing/http/multipart";
import { sharedStreamZip } from "@/lib/testing/import/zip-bomb";

afterEach(() => {
  for (const key of ["MAX_IMPORT_BYTES", "IMPORT_TIMEOUT_MS", "MAX_JSON_DEPTH", "OTEL_DECODE_TIMEOUT_MS"]) delete process.env[key];
  resetConfig();
});

describe("finding 11: imports under the 50 MB limit are read off the request loop", () => {
  it("a 22.6 MB JSON file of 400,000 messages: imported, health reads within 1 s", async () => {
    const conversations = Array.from({ length: 4000 }, (_, i) => ({ name: `c${i}`, messages: Array.from({ length: 100 }, (_, j) => ({ role: j % 2 ? "assistant" : "user", content: `message ${i} ${j} hello there` })) }));
    const file = JSON.stringify({ conversations });
    expect(file.length).toBeGreaterThan(22_000_000);
    const seen = await whileReadingHealth(() => upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "big json" } }));
    expect(seen.result.status).toBe(201);
    expect(seen.result.json.messages_imported).toBe(400_000);
    expect(seen.failedReads).toBe(0);
    expect(seen.slowestReadMs).toBeLessThan(healthReadBoundMs(seen));
  }, 120_000);

  it("one conversation of 200,000 steps: imported, health reads within 1 s", async () => {
    const steps = Array.from({ length: 200_000 }, (_, i) => (i % 2 ? { tool_result: { ok: i } } : { tool_call: { name: "lookup", arguments: { i } } }));
    const file = JSON.stringify({ conversations: [{ name: "long agent", messages: [{ role: "user", content: "go" }, { role: "assistant", content: "done", steps }] }] });
    const seen = await whileReadingHealth(() => upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "many steps" } }));
    expect(seen.result.status).toBe(201);
    expect(seen.result.json.steps_imported).toBe(200_000);
    expect(seen.failedReads).toBe(0);
    expect(seen.slowestReadMs).toBeLessThan(healthReadBoundMs(seen));
  }, 120_000);

  it("a 400,000-row CSV: imported, health reads within 1 s", async () => {
    const rows = ["conversation_id,role,content"];
    for (let i = 0; i < 400_000; i++) rows.push(`c${Math.floor(i / 100)},${i % 2 ? "assistant" : "user"},row ${i} of the export`);
    const seen = await whileReadingHealth(() => upload(createAndImport.POST, "/api/datasets/import", { file: rows.join("\n"), filename: "rows.csv", fields: { name: "big csv" } }));
    expect(seen.result.status).toBe(201);
    expect(seen.result.json.messages_imported).toBe(400_000);
    expect(seen.failedReads).toBe(0);
    expect(seen.slowestReadMs).toBeLessThan(healthReadBoundMs(seen));
  }, 120_000);

  it("one 40 MB CSV cell: imported, health reads within 1 s", async () => {
    const file = `conversation_id,role,content\nc1,user,"${"x".repeat(40 * 1024 * 1024)}"\nc1,assistant,ok`;
    const seen = await whileReadingHealth(() => upload(createAndImport.POST, "/api/datasets/import", { file, filename: "cell.csv", fields: { name: "big cell" } }));
    expect(seen.result.status).toBe(201);
    expect(seen.failedReads).toBe(0);
    expect(seen.slowestReadMs).toBeLessThan(healthReadBoundMs(seen));
  }, 120_000);

  it("an import past IMPORT_TIMEOUT_MS is stopped and refused with 422 naming it; the next import is read as usual", async () => {
    process.env.IMPORT_TIMEOUT_MS = "1";
    resetConfig();
    const before = inputTasksStoppedForTime();
    const file = JSON.stringify({ conversations: Array.from({ length: 2000 }, (_, i) => ({ name: `c${i}`, messages: [{ role: "user", content: `hello ${i}` }] })) });
    const refused = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "too slow" } });
    expect(refused.status).toBe(422);
    expect(refused.json.errors[0].message).toMatch(/time limit of 1 ms \(IMPORT_TIMEOUT_MS\)/);
    expect(inputTasksStoppedForTime()).toBe(before + 1);
    delete process.env.IMPORT_TIMEOUT_MS;
    resetConfig();
    expect((await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "in time" } })).status).toBe(201);
  }, 60_000);
});

describe("finding 8: a .eval archive is bounded by the bytes its members actually inflate to", () => {
  it("40 members sharing one deflate stream of 64 MB (a 62 KB upload): 413 naming MAX_IMPORT_BYTES within seconds, health reads within 1 s", async () => {
    const file = sharedStreamZip(40, 64 * 1024 * 1024);
    expect(file.length).toBeLessThan(100_000);
    const started = performance.now();
    const seen = await whileReadingHealth(() => upload(createAndImport.POST, "/api/datasets/import", { file, filename: "bomb.eval", fields: { name: "bomb" } }));
    const ms = performance.now() - started;
    expect(seen.result.status).toBe(413);
    expect(seen.result.json.errors[0].message).toMatch(/expands to more than 50(\.0)? MB \(MAX_IMPORT_BYTES\)/);
    // Before: every member's whole stream was inflated (40 × 64 MB), for a 422 after all of it.
    expect(ms).toBeLessThan(10_000);
    expect(seen.failedReads).toBe(0);
    expect(seen.slowestReadMs).toBeLessThan(healthReadBoundMs(seen));
  }, 60_000);
});

describe("finding 8: a small gzip upload is inflated and read off the request loop", () => {
  it("a 45 KB gzip of a 45 MB conversations file: refused as gzip (415) with the file read on the pool, health reads within 1 s", async () => {
    const json = JSON.stringify({ conversations: [{ name: "one", messages: [{ role: "user", content: "a".repeat(45 * 1024 * 1024) }] }] });
    const file = gzipSync(Buffer.from(json), { level: 9 });
    expect(file.length).toBeLessThan(64 * 1024);
    const seen = await whileReadingHealth(() => upload(createAndImport.POST, "/api/datasets/import", { file: new Uint8Array(file), filename: "big.json.gz", fields: { name: "gz" } }));
    expect(seen.result.status).toBe(415);
    expect(seen.result.json.errors[0].message).toContain("gzip");
    expect(seen.failedReads).toBe(0);
    expect(seen.slowestReadMs).toBeLessThan(healthReadBoundMs(seen));
    // Read under the pool's deadline: before, a compressed upload under 64 KB was inflated and read in process, with none.
    process.env.IMPORT_TIMEOUT_MS = "1";
    resetConfig();
    const timed = await upload(createAndImport.POST, "/api/datasets/import", { file: new Uint8Array(file), filename: "big.json.gz", fields: { name: "gz" } });
    expect(timed.status).toBe(422);
    expect(timed.json.errors[0].message).toContain("IMPORT_TIMEOUT_MS");
  }, 60_000);
});

describe("finding 9: OTLP JSON is parsed off the request loop, its nesting bounded", () => {
  const postExport = (body: Uint8Array | string, gzip: boolean) =>
    traces.POST(
      new Request("http://localhost/api/otel/v1/traces", {
        method: "POST",
        headers: { "content-type": "application/json", ...(gzip ? { "content-encoding": "gzip" } : {}) },
        body: typeof body === "string" ? body : new Uint8Array(body),
      }),
      { params: Promise.resolve({}) },
    ).then(async (res) => ({ status: res.status, text: await res.text() }));

  it("a 16 KB gzip of 16 MiB of nested arrays: 400 naming MAX_JSON_DEPTH, health reads within 1 s", async () => {
    const depth = 8 * 1024 * 1024 - 20;
    const json = `{"resourceSpans":[],"x":${"[".repeat(depth)}${"]".repeat(depth)}}`;
    const body = gzipSync(Buffer.from(json));
    expect(body.length).toBeLessThan(40_000);
    const seen = await whileReadingHealth(() => postExport(body, true));
    expect(seen.result.status).toBe(400);
    expect(seen.result.text).toContain("MAX_JSON_DEPTH");
    expect(seen.failedReads).toBe(0);
    expect(seen.slowestReadMs).toBeLessThan(healthReadBoundMs(seen));
  }, 60_000);

  it("an export of no spans padded to 16 MB (gzip and plain, four at once): 200, health reads within 1 s", async () => {
    const json = `{"resourceSpans":[{"scopeSpans":[{"spans":[]}]}],"pad":[${Array(8_000_000).fill("0").join(",")}]}`;
    expect(json.length).toBeLessThan(16 * 1024 * 1024);
    const gz = gzipSync(Buffer.from(json));
    const seen = await whileReadingHealth(() => Promise.all([postExport(gz, true), postExport(json, false), postExport(gz, true), postExport(json, false)]));
    expect(seen.result.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(seen.failedReads).toBe(0);
    expect(seen.slowestReadMs).toBeLessThan(healthReadBoundMs(seen));
  }, 60_000);

  it("a decode past OTEL_DECODE_TIMEOUT_MS is stopped with 422 naming it", async () => {
    process.env.OTEL_DECODE_TIMEOUT_MS = "1";
    resetConfig();
    const before = inputTasksStoppedForTime();
    const json = `{"resourceSpans":[{"scopeSpans":[{"spans":[]}]}],"pad":[${Array(4_000_000).fill("0").join(",")}]}`;
    const res = await postExport(json, false);
    expect(res.status).toBe(422);
    expect(res.text).toContain("OTEL_DECODE_TIMEOUT_MS");
    expect(inputTasksStoppedForTime()).toBe(before + 1);
  }, 60_000);
});

describe("finding 10: a JSON request body's nesting is bounded before it is parsed", () => {
  it("a 1 MiB body of 524,268 nested arrays (four at once): 400 naming MAX_JSON_DEPTH, nothing created, health reads within 1 s", async () => {
    const depth = 524_268;
    const body = `{"name":"deep","x":${"[".repeat(depth)}${"]".repeat(depth)}}`;
    expect(body.length).toBeLessThanOrEqual(1024 * 1024);
    const post = () => call(datasets.POST, "POST", "/api/datasets", { rawBody: body, headers: { "content-type": "application/json" } });
    const seen = await whileReadingHealth(() => Promise.all([post(), post(), post(), post()]));
    for (const res of seen.result) {
      expect(res.status).toBe(400);
      expect(res.json.error.message).toContain("MAX_JSON_DEPTH");
    }
    const list = (await call(datasets.GET, "GET", "/api/datasets?limit=500")).json as Array<{ name: string }>;
    expect(list.some((d) => d.name === "deep")).toBe(false);
    expect(seen.failedReads).toBe(0);
    expect(seen.slowestReadMs).toBeLessThan(healthReadBoundMs(seen));
  });

  it("a body nested 128 levels is read as before", async () => {
    const body = `{"name":"deep enough","x":${"[".repeat(126)}${"]".repeat(126)}}`;
    const res = await call(datasets.POST, "POST", "/api/datasets", { rawBody: body, headers: { "content-type": "application/json" } });
    expect(res.status).toBe(201);
  });
});
