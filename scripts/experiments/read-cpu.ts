/**
 * CPU per read of the `load` section's six read URLs (scripts/reliability/load-and-faults.ts), measured
 * in-process on the route handlers (no Next.js, no HTTP: only what our code and the store cost), so two
 * versions of the code can be compared on the same database file in the same minute.
 *
 *   # once: a dataset like the load section's (2,500 agent conversations, 3 metrics, a finished
 *   # 2,500-cell run and a finished 10,000-cell run), run in-process against the judge double
 *   node --conditions=react-server --import tsx scripts/experiments/read-cpu.ts prepare --db /tmp/reads.db
 *   # then, in each tree to compare (the database is copied first, so every measurement starts equal)
 *   node --conditions=react-server --import tsx scripts/experiments/read-cpu.ts measure --db /tmp/reads.db [--reads 3000]
 *
 * `measure` prints one JSON line: CPU ms per read overall and per URL kind (process.cpuUsage, user +
 * system, so GC counts), over the same pseudo-random URL sequence (seeded) every time.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { mulberry32 } from "@/lib/testing/judge-double/behaviours";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const mode = process.argv[2];
const dbArg = arg("db", "/tmp/turnscope-read-cpu.db");
const conversations = Number(arg("conversations", "2500"));
const readsWanted = Number(arg("reads", "3000"));

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

async function call(handler: Handler, method: string, url: string, params: Record<string, string | number> = {}, body?: BodyInit, headers?: HeadersInit) {
  const req = new Request(new URL(url, "http://localhost"), { method, body, headers });
  const res = await handler(req, { params: Promise.resolve(Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)]))) });
  const text = await res.text();
  return { status: res.status, text, headers: res.headers };
}

async function prepare() {
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(dbArg + suffix, { force: true });
  process.env.DATABASE_PATH = dbArg;
  process.env.LOG_LEVEL = "warn";
  const { startJudgeDouble } = await import("@/lib/testing/judge-double/server");
  const double = await startJudgeDouble({ logger: () => {} });
  double.setLatency({ min: 1, max: 4 });
  process.env.OPENAI_BASE_URL = double.baseURL;
  process.env.OPENAI_API_KEY = "sk-read-cpu";
  const { agentConversations } = await import("../reliability/data");
  const importRoute = await import("@/app/api/datasets/import/route");
  const nodes = await import("@/app/api/evaluation-pipeline-nodes/route");
  const runRoute = await import("@/app/api/evaluation-pipeline-executions/run/route");
  const execRoute = await import("@/app/api/evaluation-pipeline-executions/[id]/route");
  const form = new FormData();
  form.set("file", new Blob([JSON.stringify(agentConversations(conversations, "load"))], { type: "application/json" }), "load.json");
  form.set("name", "load");
  form.set("user_id", "reliability");
  const imported = await call(importRoute.POST as Handler, "POST", "/api/datasets/import", {}, form);
  if (imported.status !== 201) throw new Error(`import: ${imported.status} ${imported.text.slice(0, 300)}`);
  const datasetId = (JSON.parse(imported.text) as { dataset_id: number }).dataset_id;
  const metric = async (level: string, prompt: string) => {
    const res = await call(nodes.POST as Handler, "POST", "/api/evaluation-pipeline-nodes", {}, JSON.stringify({ dataset_id: datasetId, name: `${level} quality`, evaluation_level: level, prompt, output_type: "progress" }), { "content-type": "application/json" });
    if (res.status !== 201) throw new Error(`metric: ${res.status} ${res.text}`);
    return (JSON.parse(res.text) as { id: number }).id;
  };
  await metric("conversation", "Rate the whole conversation.\n@HISTORY");
  const msg = await metric("message", "Rate this answer: @CURRENT_MESSAGE.output to @CURRENT_MESSAGE.input");
  await metric("step", "Rate step @STEP_NUMBER: @CURRENT_STEP.tool_call / @CURRENT_STEP.tool_result");
  const run = async (body: Record<string, unknown>) => {
    const res = await call(runRoute.POST as Handler, "POST", "/api/evaluation-pipeline-executions/run", {}, JSON.stringify(body), { "content-type": "application/json" });
    if (res.status !== 202) throw new Error(`run: ${res.status} ${res.text}`);
    const id = (JSON.parse(res.text) as { id: number }).id;
    for (;;) {
      const r = JSON.parse((await call(execRoute.GET as Handler, "GET", `/api/evaluation-pipeline-executions/${id}`, { id })).text) as { status: string };
      if (["completed", "failed", "cancelled"].includes(r.status)) return { id, status: r.status };
      await new Promise((res) => setTimeout(res, 500));
    }
  };
  const small = await run({ dataset_id: datasetId, pipeline_node_id: msg, entity_type: null, execution_mode: "async", batch_size: 8 });
  const big = await run({ dataset_id: datasetId, execution_mode: "async", batch_size: 16 });
  await double.close();
  fs.writeFileSync(`${dbArg}.json`, JSON.stringify({ datasetId, small: small.id, big: big.id, conversations }));
  console.log(JSON.stringify({ prepared: dbArg, datasetId, small, big }));
  process.exit(0);
}


async function measure() {
  const info = JSON.parse(fs.readFileSync(`${dbArg}.json`, "utf8")) as { datasetId: number; small: number; big: number; conversations: number };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-read-cpu-"));
  const db = path.join(dir, "copy.db");
  fs.copyFileSync(dbArg, db);
  process.env.DATABASE_PATH = db;
  process.env.LOG_LEVEL = arg("log-level", "info");
  // `--sql`: time spent in each SQLite statement text (its runs only, not its preparation).
  const sqlTimes = new Map<string, { ms: number; n: number; prepares: number }>();
  if (process.argv.includes("--sql")) {
    const { default: Database } = await import("better-sqlite3");
    const proto = (Database as unknown as { prototype: { prepare: (sql: string) => unknown } }).prototype;
    const prepare = proto.prepare;
    proto.prepare = function (this: unknown, text: string) {
      const stmt = prepare.call(this, text) as Record<string, (...a: unknown[]) => unknown>;
      const entry = sqlTimes.get(text) ?? { ms: 0, n: 0, prepares: 0 };
      entry.prepares++;
      sqlTimes.set(text, entry);
      for (const method of ["all", "get", "run"]) {
        const original = stmt[method].bind(stmt);
        stmt[method] = (...args: unknown[]) => {
          const t = performance.now();
          try {
            return original(...args);
          } finally {
            entry.ms += performance.now() - t;
            entry.n++;
          }
        };
      }
      return stmt;
    };
  }
  // The route wrapper's request log line is part of a read's cost: keep it, but off the terminal.
  const grid = (await import("@/app/api/datasets/[id]/grid/route")).GET as Handler;
  const executions = (await import("@/app/api/evaluation-pipeline-executions/route")).GET as Handler;
  const execution = (await import("@/app/api/evaluation-pipeline-executions/[id]/route")).GET as Handler;
  const results = (await import("@/app/api/evaluation-pipeline-executions/[id]/results/route")).GET as Handler;
  const datasets = (await import("@/app/api/datasets/route")).GET as Handler;
  const n = info.conversations;
  const { datasetId, small, big } = info;
  const reads: Array<(r: () => number) => [string, Handler, string, Record<string, number>]> = [
    (r) => ["grid conversation", grid, `/api/datasets/${datasetId}/grid?level=conversation&limit=50&offset=${Math.floor(r() * n)}`, { id: datasetId }],
    (r) => ["grid step", grid, `/api/datasets/${datasetId}/grid?level=step&limit=50&offset=${Math.floor(r() * n * 2)}`, { id: datasetId }],
    () => ["executions list", executions, `/api/evaluation-pipeline-executions?dataset_id=${datasetId}&limit=20`, {}],
    () => ["execution", execution, `/api/evaluation-pipeline-executions/${big}`, { id: big }],
    (r) => ["results", results, `/api/evaluation-pipeline-executions/${small}/results?limit=100&offset=${Math.floor(r() * n)}`, { id: small }],
    () => ["datasets list", datasets, `/api/datasets?limit=20`, {}],
  ];
  const sequence = (count: number, seed: number) => {
    const r = mulberry32(seed); // the same URL sequence on every measurement
    return Array.from({ length: count }, () => reads[Math.floor(r() * reads.length)](r));
  };
  // Muted log lines still cost their formatting: send stdout's writes nowhere during the timed loop.
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write;
  const bodies = new Map<string, number>();
  const run = async (list: ReturnType<typeof sequence>) => {
    const byKind = new Map<string, { cpu: number; n: number }>();
    for (const [kind, handler, url, params] of list) {
      const before = process.cpuUsage();
      const res = await call(handler, "GET", url, params);
      const used = process.cpuUsage(before);
      if (res.status !== 200) throw new Error(`${res.status} ${url}: ${res.text.slice(0, 200)}`);
      bodies.set(kind, (bodies.get(kind) ?? 0) + res.text.length);
      const k = byKind.get(kind) ?? { cpu: 0, n: 0 };
      k.cpu += (used.user + used.system) / 1000;
      k.n++;
      byKind.set(kind, k);
    }
    return byKind;
  };
  await run(sequence(300, 7)); // warm-up: JIT, statement caches, page cache
  const t = performance.now();
  const before = process.cpuUsage();
  const byKind = await run(sequence(readsWanted, 42));
  const used = process.cpuUsage(before);
  const wall = performance.now() - t;
  process.stdout.write = write;
  const r2 = (x: number) => Math.round(x * 100) / 100;
  console.log(
    JSON.stringify({
      at: new Date().toISOString(),
      tree: process.cwd(),
      reads: readsWanted,
      cpu_ms_per_read: r2((used.user + used.system) / 1000 / readsWanted),
      wall_ms_per_read: r2(wall / readsWanted),
      by_kind: Object.fromEntries([...byKind].map(([k, v]) => [k, r2(v.cpu / v.n)])),
      loadavg: os.loadavg().map((x) => r2(x)),
    }),
  );
  if (sqlTimes.size) {
    for (const [text, v] of [...sqlTimes].sort((a, b) => b[1].ms - a[1].ms).slice(0, 15)) {
      console.log(`${(v.ms / readsWanted).toFixed(3)} ms/read  ${v.n} runs  ${v.prepares} prepares  ${text.replace(/\s+/g, " ").slice(0, 260)}`);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

const main = mode === "prepare" ? prepare : mode === "measure" ? measure : undefined;
if (!main) throw new Error("usage: read-cpu.ts prepare|measure --db path");
main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
