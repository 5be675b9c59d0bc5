/**
 * The trace store as it grows (issue 52), on SQLite and on PostgreSQL (TRACE_STORE_STORES, default
 * "sqlite,postgres"; PostgreSQL on a throwaway cluster): TRACE_STORE_SPANS (default 200,000) GenAI spans
 * of bench/support/otel-spans.ts (agents' turns, ~2 KB a span, 512 an export) sent one export at a time to
 * the OTLP route handler in process, the touched conversations rebuilt after every 8 exports. Figures: the
 * store's bytes per span (otel_spans' rows and its two indexes, and the trace and conversation records),
 * what a span's `data` holds, and export latency and rate and a rebuild pass's time in the first and the
 * last 10% of the exports (on an empty store, after two warming exports, and at full size). Prints `BENCH_RESULT` and the table; it
 * writes nothing into the docs. TRACE_STORE_EXPLAIN=1 also prints the plans of the reads an export and a
 * rebuild make, at full size.
 *
 *   TRACE_STORE_SPANS=1000000 nice -n 10 npm run bench -- bench/trace-store.bench.ts
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { onEachStore } from "./support/stores";

const root = path.resolve(import.meta.dirname, "..");
const SPANS = Number(process.env.TRACE_STORE_SPANS ?? 200_000);
const STORES = (process.env.TRACE_STORE_STORES ?? "sqlite,postgres").split(",");
const REBUILD_EVERY = 8;

type Window = { exports: number; spans_per_s: number; p50_ms: number; p90_ms: number; p99_ms: number; max_ms: number; rebuild_pass_ms: number };
type Result = {
  store: string;
  spans: number;
  conversations: number;
  bytes_per_span: { rows: number; indexes: number; traces_and_conversations: number; total: number };
  /** The decoded span's JSON, what its `data` column holds (compressed on SQLite; without the columns' fields), and two parts of the JSON. */
  data: { bytes_per_span: number; stored_bytes_per_span: number; resource_and_scope: number; repeated_columns: number };
  first: Window;
  last: Window;
};

const round = (n: number) => Math.round(n * 10) / 10;
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

async function child(store: string): Promise<void> {
  const { rawRows, rawRun } = await import("@/db/store");
  const { batch, BATCH } = await import("./support/otel-spans");
  const { flushAssembly } = await import("@/lib/otel/ingest");
  const traces = await import("@/app/api/otel/v1/traces/route");
  const pg = store === "postgres";

  const exports = Math.ceil(SPANS / BATCH);
  const windowSize = Math.max(1, Math.floor(exports / 10));
  const latencies: number[] = [];
  const rebuilds: Array<{ at: number; ms: number }> = [];
  for (let i = 0; i < exports; i++) {
    const body = batch();
    const t0 = performance.now();
    const res = await traces.POST(new Request("http://localhost/api/otel/v1/traces", { method: "POST", headers: { "content-type": "application/x-protobuf" }, body: body as BodyInit }), {
      params: Promise.resolve({}),
    });
    await res.arrayBuffer();
    latencies.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`export ${i}: ${res.status}`);
    if ((i + 1) % REBUILD_EVERY === 0) {
      const r0 = performance.now();
      await flushAssembly();
      rebuilds.push({ at: i, ms: performance.now() - r0 });
    }
    if (i % 200 === 0) console.error(`  ${store}: ${i * BATCH} spans`);
  }
  await flushAssembly();

  const window = (from: number, to: number): Window => {
    const ms = latencies.slice(from, to);
    const sorted = [...ms].sort((a, b) => a - b);
    const passes = rebuilds.filter((r) => r.at >= from && r.at < to).map((r) => r.ms);
    const total = ms.reduce((a, b) => a + b, 0) + passes.reduce((a, b) => a + b, 0);
    return {
      exports: ms.length,
      spans_per_s: Math.round((ms.length * BATCH * 1000) / total),
      p50_ms: round(quantile(sorted, 0.5)),
      p90_ms: round(quantile(sorted, 0.9)),
      p99_ms: round(quantile(sorted, 0.99)),
      max_ms: round(sorted[sorted.length - 1]),
      rebuild_pass_ms: round(passes.length ? passes.reduce((a, b) => a + b, 0) / passes.length : 0),
    };
  };

  if (process.env.TRACE_STORE_EXPLAIN) {
    // The plans of the reads an export and a rebuild make, at full size (a diagnosis aid).
    const [{ id }] = await rawRows<{ id: number }>("select id from otel_conversations order by id desc limit 1");
    const [{ dataset_id: ds, trace_id: trace }] = await rawRows<{ dataset_id: number; trace_id: string }>("select dataset_id, trace_id from otel_traces where otel_conversation_id = ? limit 1", [id]);
    const explain = pg ? "explain (analyze, buffers)" : "explain query plan";
    for (const [text, params] of [
      ["select t.otel_conversation_id, s.data from otel_traces t join otel_spans s on s.dataset_id = t.dataset_id and s.trace_id = t.trace_id where t.otel_conversation_id in (?) order by s.start_ns, s.id", [id]],
      ["select t.trace_id, (select count(*) from otel_spans s where s.dataset_id = t.dataset_id and s.trace_id = t.trace_id) as spans from otel_traces t where t.otel_conversation_id = ?", [id]],
      ["select count(*) from otel_spans s join otel_traces t on t.dataset_id = s.dataset_id and t.trace_id = s.trace_id where t.otel_conversation_id = ?", [id]],
      ["select t.trace_id, t.otel_conversation_id, t.keyed, c.key from otel_traces t join otel_conversations c on c.id = t.otel_conversation_id where t.dataset_id = ? and t.trace_id in (?)", [ds, trace]],
      ["select id from otel_conversations where assembled_revision < revision order by last_span_at limit 100", []],
    ] as Array<[string, unknown[]]>) {
      const plan = await rawRows<Record<string, unknown>>(`${explain} ${text}`, params);
      console.error(`\n${text}\n${plan.map((r) => Object.values(r).join(" ")).join("\n")}`);
    }
    if (pg) {
      // An export's insert: 512 spans copied under new random ids, timed, then deleted.
      const insert = await rawRows<Record<string, unknown>>(
        `explain (analyze, buffers) insert into otel_spans (dataset_id, trace_id, span_id, name, start_ns, data, received_at)
         select dataset_id, md5(random()::text), substr(md5(random()::text), 1, 16), name, start_ns, data, 'bench-copy' from otel_spans order by id desc limit 512
         on conflict (dataset_id, trace_id, span_id) do nothing`,
      );
      console.error(`\ninsert of 512 spans\n${insert.map((r) => Object.values(r).join(" ")).join("\n")}`);
      await rawRun("delete from otel_spans where received_at = 'bench-copy'");
      // Which tables one more export scans whole (the statistics collector's counters, before and after).
      const scans = async () =>
        new Map((await rawRows<{ relname: string; seq: string; rows: string }>("select relname, seq_scan as seq, seq_tup_read as rows from pg_stat_user_tables")).map((r) => [r.relname, [Number(r.seq), Number(r.rows)]]));
      await rawRun("select pg_stat_clear_snapshot()");
      const before = await scans();
      const res = await traces.POST(new Request("http://localhost/api/otel/v1/traces", { method: "POST", headers: { "content-type": "application/x-protobuf" }, body: batch() as BodyInit }), {
        params: Promise.resolve({}),
      });
      await res.arrayBuffer();
      await new Promise((r) => setTimeout(r, 1500)); // the counters are flushed about every second
      await rawRun("select pg_stat_clear_snapshot()");
      const after = await scans();
      const grew = [...after].map(([t, [seq, rows]]) => [t, seq - (before.get(t)?.[0] ?? 0), rows - (before.get(t)?.[1] ?? 0)] as const).filter(([, seq]) => seq > 0);
      console.error(`\nseq scans during one export: ${JSON.stringify(grew)}`);
    }
  }
  const [{ n: spans }] = await rawRows<{ n: number }>("select count(*) as n from otel_spans");
  const [{ n: conversations }] = await rawRows<{ n: number }>("select count(*) as n from otel_conversations");
  let rows: number, indexes: number, records: number;
  if (pg) {
    await rawRun("vacuum analyze otel_spans");
    const size = async (sql: string) => Number((await rawRows<{ n: string }>(sql))[0].n);
    rows = await size("select pg_table_size('otel_spans') as n");
    indexes = await size("select pg_indexes_size('otel_spans') as n");
    records = await size("select pg_total_relation_size('otel_traces') + pg_total_relation_size('otel_conversations') as n");
  } else {
    const sizes = new Map(
      (await rawRows<{ name: string; n: number }>("select name, sum(pgsize) as n from dbstat where name like 'otel_%' group by name")).map((r) => [r.name, Number(r.n)]),
    );
    rows = sizes.get("otel_spans") ?? 0;
    indexes = sizes.get("otel_spans_dataset_trace_span_idx") ?? 0;
    records = [...sizes].filter(([name]) => !name.startsWith("otel_spans")).reduce((a, [, n]) => a + n, 0);
  }
  // What a span's `data` holds: a sample of 2,000 across the store (later turns carry longer histories).
  const step = Math.max(1, Math.floor(Number(spans) / 2000));
  const { spanFromRow } = await import("@/db/repositories/otel-span-store");
  const sample = await rawRows<{ trace_id: string; span_id: string; name: string; start_ns: string; data: unknown }>(
    `select trace_id, span_id, name, start_ns, data from otel_spans where id % ${step} = 0 limit 2000`,
  );
  let dataBytes = 0;
  let storedBytes = 0;
  let resourceAndScope = 0;
  let repeated = 0;
  for (const row of sample) {
    const span = spanFromRow(row) as Record<string, unknown>;
    storedBytes += row.data instanceof Uint8Array ? row.data.length : Buffer.byteLength(typeof row.data === "string" ? row.data : JSON.stringify(row.data));
    dataBytes += Buffer.byteLength(JSON.stringify(span));
    resourceAndScope += Buffer.byteLength(JSON.stringify({ resource: span.resource, scope: span.scope }));
    repeated += Buffer.byteLength(JSON.stringify({ traceId: span.traceId, spanId: span.spanId, name: span.name, startNs: span.startNs }));
  }
  const n = Number(spans);
  const result: Result = {
    store,
    spans: n,
    conversations: Number(conversations),
    bytes_per_span: { rows: Math.round(rows / n), indexes: Math.round(indexes / n), traces_and_conversations: Math.round(records / n), total: Math.round((rows + indexes + records) / n) },
    data: { bytes_per_span: Math.round(dataBytes / sample.length), stored_bytes_per_span: Math.round(storedBytes / sample.length), resource_and_scope: Math.round(resourceAndScope / sample.length), repeated_columns: Math.round(repeated / sample.length) },
    // The first two exports start the input pool's threads: not the store's size.
    first: window(Math.min(2, exports - 1), Math.min(exports, 2 + windowSize)),
    last: window(exports - windowSize, exports),
  };
  console.log(`TRACE_STORE ${JSON.stringify(result)}`);
}

function runChild(store: string, env: NodeJS.ProcessEnv): Result {
  console.log(`  ${store}: ${SPANS.toLocaleString("en-US")} spans`);
  const res = spawnSync("npx", ["tsx", "--conditions=react-server", import.meta.filename], {
    cwd: root,
    encoding: "utf8",
    env: { ...env, TRACE_STORE_CHILD: store, LOG_LEVEL: "silent", OTEL_ASSEMBLY_DELAY_MS: "3600000" },
    maxBuffer: 64 * 1024 * 1024,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = (res.stdout ?? "").split("\n").find((l) => l.startsWith("TRACE_STORE "));
  if (res.status !== 0 || !line) throw new Error(`${store} bench failed (exit ${res.status}):\n${res.stdout}`);
  return JSON.parse(line.slice("TRACE_STORE ".length)) as Result;
}

async function parent(): Promise<void> {
  const results = (await onEachStore(STORES, { name: "trace-store" }, runChild)).map((r) => r.result);
  const w = (x: Window) => `${x.spans_per_s.toLocaleString("en-US")} spans/s, p50 ${x.p50_ms} / p99 ${x.p99_ms} ms, rebuild pass ${x.rebuild_pass_ms} ms`;
  console.log(
    [
      `| store | spans | bytes / span: rows + indexes + traces and conversations = total | a span's data (JSON): of it resource and scope, columns repeated; stored | first 10% of exports | last 10% |`,
      "|---|---|---|---|---|---|",
      ...results.map(
        (r) =>
          `| ${r.store} | ${r.spans.toLocaleString("en-US")} | ${r.bytes_per_span.rows} + ${r.bytes_per_span.indexes} + ${r.bytes_per_span.traces_and_conversations} = **${r.bytes_per_span.total}** | ${r.data.bytes_per_span}: ${r.data.resource_and_scope}, ${r.data.repeated_columns}; ${r.data.stored_bytes_per_span} | ${w(r.first)} | ${w(r.last)} |`,
      ),
    ].join("\n"),
  );
  console.log(`BENCH_RESULT ${JSON.stringify({ trace_store: results })}`);
}

(process.env.TRACE_STORE_CHILD ? child(process.env.TRACE_STORE_CHILD) : parent()).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
