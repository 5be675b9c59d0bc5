/**
 * Benchmarks of importing a conversations file. Run with `npm run bench`; figures go to
 * bench/results.json. No thresholds: the numbers are for reading.
 *
 * - `import_10mb_2k_conversations`: the case the import issue names, a ≈10 MB file of 2,000
 *   conversations with tool steps, POSTed as multipart to the real create-and-import route handler
 *   (form parsing, decode, parse, validate, insert, response). It runs in a fresh child process so
 *   the peak RSS growth is the import's own, not left over from generating the file or from the
 *   10k case: growth = the process's peak RSS after the import minus its RSS just before (after a GC).
 *   That is an upper bound — it would also count any earlier peak, and there is none bigger here.
 *   `cpu_ms` / `warm_cpu_ms`: the process's CPU time (all its threads) for each import and the 200 ms
 *   after it, so the engine's background compiles it started count; steadier than wall time on a
 *   loaded machine, where the wall time also counts the time other processes held the cores.
 * - `import_10k_conversations`: 10,000 conversations (≈20 MB), stage by stage, into a fresh SQLite file.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import v8 from "node:v8";
import vm from "node:vm";
import { closeDb, getDb } from "@/db/sqlite-database";
import { insertConversationsBulk } from "@/db/repositories/imports";
import { POST as createAndImport } from "@/app/api/datasets/import/route";
import type { ImportSuccess } from "@/lib/schemas/imports";
import { decodeUpload } from "@/lib/import/decode";
import { normaliseUpload } from "@/lib/import/formats";
import { parseUpload } from "@/lib/import/parse";
import { validateConversations } from "@/lib/import/validate";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

/** Set in the child process: the path of the generated file it imports. */
const CHILD_FILE_ENV = "TURNSCOPE_IMPORT_BENCH_FILE";

const round = (n: number) => Math.round(n * 10) / 10;
const mb = (bytes: number) => round(bytes / 1024 / 1024);
/** The process's CPU time so far (user and system, all threads), in ms. */
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** The process's peak resident set so far, in bytes (the kernel reports KiB). */
const peakRss = () => process.resourceUsage().maxRSS * 1024;

function makeFile(conversationCount: number, messagesPerConversation: number): Uint8Array {
  const agents = [
    {
      name: "support",
      tools: {
        lookup_order: { name: "lookup_order", parameters: { order_id: "string" } },
        refund: { name: "refund", parameters: { order_id: "string", amount: "number" } },
      },
    },
  ];
  const conversations = Array.from({ length: conversationCount }, (_, c) => ({
    name: `Conversation ${c}`,
    meta: { channel: c % 2 ? "web" : "email", customer: { tier: c % 3 ? "gold" : "basic", id: c } },
    agents,
    messages: Array.from({ length: messagesPerConversation }, (_, m) =>
      m % 2 === 0
        ? { role: "user", content: `Where is my order ${c}-${m}? It was supposed to arrive yesterday and it has not.` }
        : {
            role: "assistant",
            content: `Order ${c}-${m} left the warehouse this morning and should reach you tomorrow before noon.`,
            meta: { latency_ms: 800 + m, input_tokens: 420, output_tokens: 38 },
            // Every other assistant turn uses a tool: three steps.
            steps:
              m % 4 === 1
                ? [
                    { thinking: "The user asks about an order; look it up.", model_name: "gpt-4o-mini", agent_name: "support" },
                    { tool_call: { name: "lookup_order", arguments: { order_id: `${c}-${m}` } }, agent_name: "support" },
                    { tool_result: { status: "shipped", eta: "tomorrow" }, agent_name: "support" },
                  ]
                : [],
          },
    ),
  }));
  return new TextEncoder().encode(JSON.stringify({ conversations }));
}

function time<T>(fn: () => T): [T, number] {
  const start = performance.now();
  const value = fn();
  return [value, performance.now() - start];
}

/** A multipart/form-data body as a browser sends it: the file, then the dataset's name. */
function multipartBody(file: Uint8Array, name: string): { body: Uint8Array<ArrayBuffer>; contentType: string } {
  const boundary = `----turnscope-bench-${Date.now()}`;
  const enc = new TextEncoder();
  const head = enc.encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.json"\r\nContent-Type: application/json\r\n\r\n`,
  );
  const tail = enc.encode(
    `\r\n--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\n${name}` +
      `\r\n--${boundary}\r\nContent-Disposition: form-data; name="get_feedback"\r\n\r\nfalse\r\n--${boundary}--\r\n`,
  );
  const body = new Uint8Array(head.length + file.length + tail.length);
  body.set(head, 0);
  body.set(file, head.length);
  body.set(tail, head.length + file.length);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** One POST to the create-and-import route; throws unless it imported. */
async function postImport(body: Uint8Array<ArrayBuffer>, contentType: string): Promise<ImportSuccess> {
  const req = new Request("http://localhost/api/datasets/import", { method: "POST", body, headers: { "content-type": contentType } });
  const res = await createAndImport(req, { params: Promise.resolve({}) });
  const json = (await res.json()) as ImportSuccess;
  if (res.status !== 201 || !json.success) throw new Error(`import failed (${res.status}): ${JSON.stringify(json).slice(0, 500)}`);
  return json;
}

/** Child process: import the file through the route handler, first cold (timed, memory), then warm. */
async function routeCaseChild(file: string) {
  getDb(); // migrated before the baseline, as in a running server
  const bytes = fs.readFileSync(file);
  const { body, contentType } = multipartBody(bytes, "bench 10 MB");
  gc();
  const rssBefore = process.memoryUsage().rss;
  const peakBefore = peakRss();
  const cpuStart = cpuMs();
  const start = performance.now();
  const result = await postImport(body, contentType);
  const coldMs = performance.now() - start;
  const peakAfter = peakRss();
  await sleep(200);
  const coldCpuMs = cpuMs() - cpuStart;

  const warm = multipartBody(bytes, "bench 10 MB, warm");
  gc();
  const warmCpuStart = cpuMs();
  const warmStart = performance.now();
  await postImport(warm.body, warm.contentType);
  const warmMs = performance.now() - warmStart;
  await sleep(200);
  const warmCpuMs = cpuMs() - warmCpuStart;
  closeDb();

  const figures = {
    file_mb: mb(bytes.length),
    conversations: result.conversations_imported,
    messages: result.messages_imported,
    steps: result.steps_imported,
    warnings: result.warnings.length,
    total_ms: Math.round(coldMs),
    warm_total_ms: Math.round(warmMs),
    cpu_ms: Math.round(coldCpuMs),
    warm_cpu_ms: Math.round(warmCpuMs),
    rss_before_mb: mb(rssBefore),
    peak_rss_mb: mb(peakAfter),
    peak_rss_growth_mb: mb(peakAfter - rssBefore),
    peak_rss_before_import_mb: mb(peakBefore),
  };
  console.log(`CHILD_RESULT ${JSON.stringify(figures)}`);
}

/** The 10 MB case, run in a child process of this same file so its memory figures are its own. */
function routeCase(): Record<string, unknown> {
  const [bytes, generateMs] = time(() => makeFile(2_000, 22)); // ≈10 MB (10.1 MiB, so it also gets the split-the-file warning)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-import-bench-"));
  const file = path.join(dir, "bench-10mb.json");
  fs.writeFileSync(file, bytes);
  try {
    const res = spawnSync(process.execPath, [...process.execArgv, process.argv[1]], {
      encoding: "utf8",
      env: { ...process.env, [CHILD_FILE_ENV]: file },
      maxBuffer: 16 * 1024 * 1024,
    });
    const line = (res.stdout ?? "").split("\n").find((l) => l.startsWith("CHILD_RESULT "));
    if (res.status !== 0 || !line) throw new Error(`10 MB import child failed (exit ${res.status}): ${res.stderr}${res.stdout}`);
    const figures = JSON.parse(line.slice("CHILD_RESULT ".length)) as Record<string, unknown>;
    return {
      ...figures,
      generate_ms: Math.round(generateMs),
      via: "POST /api/datasets/import route handler (multipart), fresh process",
      node: process.version,
      measured_at: new Date().toISOString(),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function stagesCase(): Promise<Record<string, unknown>> {
  const [bytes, generateMs] = time(() => makeFile(10_000, 8));
  const [decoded, decodeMs] = time(() => decodeUpload(bytes, { maxBytes: 512 * 1024 * 1024 }));
  if (!decoded.ok) throw new Error("decode failed");
  const [parsed, parseMs] = time(() => parseUpload(decoded.text));
  if (!parsed.ok) throw new Error("parse failed");
  const [validated, validateMs] = time(() => {
    const normalised = normaliseUpload(parsed);
    return validateConversations(normalised.data);
  });
  if (!validated.ok) throw new Error(`validation failed: ${JSON.stringify(validated.errors.slice(0, 3))}`);
  const insertStart = performance.now();
  const inserted = await insertConversationsBulk({ create: { name: "bench", description: null, userId: "bench" } }, validated.conversations);
  const insertMs = performance.now() - insertStart;
  if (!inserted.ok) throw new Error("insert failed");
  const stored = getDb().$client.prepare("select count(*) as n from steps where dataset_id = ?").get(inserted.datasetId) as { n: number };
  if (stored.n !== inserted.steps) throw new Error("row counts differ");

  const totalMs = decodeMs + parseMs + validateMs + insertMs;
  return {
    conversations: inserted.conversations,
    messages: inserted.messages,
    steps: inserted.steps,
    file_mb: mb(bytes.length),
    generate_ms: Math.round(generateMs),
    decode_ms: Math.round(decodeMs),
    parse_ms: Math.round(parseMs),
    validate_ms: Math.round(validateMs),
    insert_ms: Math.round(insertMs),
    total_ms: Math.round(totalMs),
    conversations_per_s: Math.round(inserted.conversations / (totalMs / 1000)),
    rows_per_s: Math.round((inserted.conversations + inserted.messages + inserted.steps) / (insertMs / 1000)),
    peak_rss_mb: mb(peakRss()),
    node: process.version,
    measured_at: new Date().toISOString(),
  };
}

async function main() {
  const childFile = process.env[CHILD_FILE_ENV];
  if (childFile) return routeCaseChild(childFile);
  getDb(); // migrate before timing
  const import10mb = routeCase();
  const import10k = await stagesCase();
  closeDb();
  console.log(`BENCH_RESULT ${JSON.stringify({ import_10mb_2k_conversations: import10mb, import_10k_conversations: import10k })}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
