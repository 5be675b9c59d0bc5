/**
 * Grid reads at scale (issue 52): one dataset grown to 100k, 300k and 1M conversations (SCALE_SIZES, e.g.
 * "100000,300000"), on SQLite and on PostgreSQL (SCALE_STORES, default "sqlite,postgres"; PostgreSQL on a
 * throwaway test server, scripts/pg-test-server.mjs), each read timed SCALE_RUNS times (default 21) through
 * the route handlers (median / p95): the grid's first page, a meta filter, a meta sort, metric filters (a
 * common verdict, a rare one, `none`), a metric sort, and the conversations list deep in the dataset by offset and by cursor.
 * Conversations are written straight into the store by SQL (two messages, three meta fields `channel`,
 * `score`, `tier`, and one checkbox verdict each, 70 % pass, except 0.1 % failed and 0.1 % without a result),
 * the way imports and runs leave them (the triggers keeping counts and latest results fire). Writes the curve
 * into docs/performance.md (between its "scale bench" markers; not with SCALE_NO_DOC=1) with the database's
 * size per conversation, and prints `BENCH_RESULT`.
 *
 *   nice -n 10 npm run bench -- bench/scale.bench.ts
 *   SCALE_SIZES=100000,300000 SCALE_STORES=sqlite nice -n 10 npm run bench -- bench/scale.bench.ts
 *
 * Each store runs in a child process of its own (the store is chosen once per process).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { onEachStore } from "./support/stores";

const root = path.resolve(import.meta.dirname, "..");
const SIZES = (process.env.SCALE_SIZES ?? "100000,300000,1000000").split(",").map(Number);
const STORES = (process.env.SCALE_STORES ?? "sqlite,postgres").split(",");
// 21 samples: the p95 is the 20th, not the slowest of 7 (on a shared machine the slowest is whatever else ran then).
const RUNS = Number(process.env.SCALE_RUNS ?? 21);
const CHUNK = 50_000;

export type ReadName =
  | "first_page"
  | "meta_filter"
  | "meta_sort"
  | "metric_filter"
  | "metric_rare"
  | "metric_none"
  | "metric_sort"
  | "list_deep_offset"
  | "list_deep_cursor";
type Timing = { median_ms: number; p95_ms: number; total: number | null; total_kind: string | null };
type Point = { conversations: number; bytes: number; bytes_per_conversation: number; grow_s: number; reads: Record<ReadName, Timing> };

const READS: Record<ReadName, string> = {
  first_page: "grid, first page",
  meta_filter: "grid filtered `meta.channel==phone;meta.score>=90`",
  meta_sort: "grid sorted `-meta.score`",
  metric_filter: "grid filtered `metric.<id>==fail`",
  metric_rare: "grid filtered `metric.<id>==failed` (0.1%)",
  metric_none: "grid filtered `metric.<id>==none` (0.1%)",
  metric_sort: "grid sorted `-metric.<id>`",
  list_deep_offset: "list, 50 at offset n−100",
  list_deep_cursor: "list, 50 after a cursor at n−100",
};

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}
const round = (n: number) => Math.round(n * 10) / 10;

// ───────────────────────── child: one store ─────────────────────────

async function child(store: string): Promise<void> {
  const { rawRun, rawRows } = await import("@/db/store");
  const { createDataset } = await import("@/lib/datasets");
  const { createNode } = await import("@/db/repositories/metrics");
  const { call } = await import("@/lib/testing/http/call");
  const { metaIndexesSettled, listMetaIndexNames } = await import("@/db/repositories/meta-indexes");
  const grid = await import("@/app/api/datasets/[id]/grid/route");
  const list = await import("@/app/api/datasets/[id]/conversations/route");
  const pg = store === "postgres";

  const dataset = await createDataset({ name: "scale bench", userId: "bench" });
  const node = await createNode(dataset.id, {
    name: "resolved",
    evaluationLevel: "conversation",
    prompt: "Was it resolved? @CONVERSATION",
    outputType: "checkbox",
    templateVariables: ["@CONVERSATION"],
    isAdvanced: true,
  });
  await rawRun("insert into pipeline_executions (dataset_id, pipeline_node_id, status) values (?, ?, 'completed')", [dataset.id, node.id]);
  const [{ id: executionId }] = await rawRows<{ id: number }>("select max(id) as id from pipeline_executions");

  const series = (from: number, to: number) =>
    pg ? `generate_series(${from}, ${to - 1}) as g(i)` : `(with recursive s(i) as (select ${from} union all select i + 1 from s where i < ${to - 1}) select i from s) as g`;
  const meta = pg
    ? "json_build_object('channel', (array['phone','chat','email'])[g.i % 3 + 1], 'score', ((g.i % 1000) * 7919) % 100, 'tier', 'tier' || (g.i % 5))"
    : "json_object('channel', case g.i % 3 when 0 then 'phone' when 1 then 'chat' else 'email' end, 'score', ((g.i % 1000) * 7919) % 100, 'tier', 'tier' || (g.i % 5))";

  /** Conversations [from, to) of the dataset, with their messages and verdicts, in chunks of CHUNK. */
  async function grow(from: number, to: number) {
    for (let a = from; a < to; a += CHUNK) {
      const b = Math.min(to, a + CHUNK);
      await rawRun(`insert into conversations (dataset_id, position, name, meta) select cast(? as integer), g.i, 'Conversation ' || g.i, ${meta} from ${series(a, b)}`, [dataset.id]);
      for (const [pos, role, text] of [
        [0, "user", "'Where is my order ' || c.position"],
        [1, "assistant", "'Order ' || c.position || ' ships tomorrow.'"],
      ] as const) {
        await rawRun(
          `insert into messages (conversation_id, dataset_id, position, role, content) select c.id, c.dataset_id, ${pos}, '${role}', ${text} from conversations c where c.dataset_id = ? and c.position >= ? and c.position < ?`,
          [dataset.id, a, b],
        );
      }
      // One verdict each (70% pass), except 0.1% failed (no score) and 0.1% without any result.
      await rawRun(
        `insert into evaluation_results (execution_id, pipeline_node_id, dataset_id, entity_type, entity_id, conversation_id, result, score, status)
         select cast(? as integer), cast(? as integer), c.dataset_id, 'conversation', c.id, c.id,
           case when c.position % 1000 = 500 then null when (c.position * 31) % 10 < 7 then ${pg ? "cast('{\"value\":true,\"reasoning\":\"resolved\"}' as json)" : "'{\"value\":true,\"reasoning\":\"resolved\"}'"} else ${pg ? "cast('{\"value\":false,\"reasoning\":\"not resolved\"}' as json)" : "'{\"value\":false,\"reasoning\":\"not resolved\"}'"} end,
           case when c.position % 1000 = 500 then null when (c.position * 31) % 10 < 7 then 1 else 0 end,
           case when c.position % 1000 = 500 then 'failed' else 'completed' end
         from conversations c where c.dataset_id = ? and c.position >= ? and c.position < ? and c.position % 1000 <> 999`,
        [executionId, node.id, dataset.id, a, b],
      );
    }
    // Settled, as autovacuum leaves a store after a bulk load (visibility map set, statistics gathered).
    if (pg) await rawRun("vacuum analyze");
  }

  async function size(): Promise<number> {
    if (pg) return Number((await rawRows<{ n: string }>("select pg_database_size(current_database()) as n"))[0].n);
    await rawRun("pragma wal_checkpoint(truncate)").catch(() => undefined);
    const [{ n }] = await rawRows<{ n: number }>("select (select page_count from pragma_page_count()) * (select page_size from pragma_page_size()) as n");
    return n;
  }

  async function time(run: () => Promise<{ status: number; headers: Headers; text: string }>): Promise<Timing> {
    const first = await run(); // warm: the same query once untimed; it asks for the meta indexes it would use
    if (first.status !== 200) throw new Error(`${first.status} ${first.text.slice(0, 300)}`);
    const t0 = performance.now();
    await metaIndexesSettled();
    const built = performance.now() - t0;
    if (built > 50) console.error(`  (${store}: meta indexes built in ${Math.round(built)} ms)`);
    const ms: number[] = [];
    let last = first;
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      last = await run();
      ms.push(performance.now() - t0);
    }
    ms.sort((x, y) => x - y);
    const total = last.headers.get("x-total-count");
    return { median_ms: round(quantile(ms, 0.5)), p95_ms: round(quantile(ms, 0.95)), total: total === null ? null : Number(total), total_kind: last.headers.get("x-total-count-kind") };
  }

  const gridGet = (query: string) => () => call(grid.GET, "GET", `/api/datasets/${dataset.id}/grid?level=conversation&limit=50&${query}`, { params: { id: dataset.id } });
  const listGet = (query: string) => () => call(list.GET, "GET", `/api/datasets/${dataset.id}/conversations?limit=50&${query}`, { params: { id: dataset.id } });

  let have = 0;
  for (const n of SIZES) {
    const t0 = performance.now();
    await grow(have, n);
    const growS = (performance.now() - t0) / 1000;
    have = n;
    const bytes = await size();
    // The cursor of the row at n − 101: the list's page that starts 100 rows before the end.
    const probe = await listGet(`offset=${n - 101}&limit=1`)();
    const cursor = probe.headers.get("x-next-cursor");
    const reads: Record<ReadName, Timing> = {
      first_page: await time(gridGet("")),
      meta_filter: await time(gridGet(`filter=${encodeURIComponent("meta.channel==phone;meta.score>=90")}&meta=channel,score`)),
      meta_sort: await time(gridGet(`sort=-meta.score&meta=score`)),
      metric_filter: await time(gridGet(`filter=${encodeURIComponent(`metric.${node.id}==fail`)}`)),
      metric_rare: await time(gridGet(`filter=${encodeURIComponent(`metric.${node.id}==failed`)}`)),
      metric_none: await time(gridGet(`filter=${encodeURIComponent(`metric.${node.id}==none`)}`)),
      metric_sort: await time(gridGet(`sort=-metric.${node.id}`)),
      list_deep_offset: await time(listGet(`offset=${n - 100}`)),
      list_deep_cursor: cursor ? await time(listGet(`cursor=${encodeURIComponent(cursor)}`)) : { median_ms: NaN, p95_ms: NaN, total: null, total_kind: "no cursor" },
    };
    const point: Point = { conversations: n, bytes, bytes_per_conversation: Math.round(bytes / n), grow_s: round(growS), reads };
    console.log(`SCALE_POINT ${JSON.stringify({ store, ...point })}`);
    console.error(`  ${store} ${n}: ${JSON.stringify(Object.fromEntries(Object.entries(reads).map(([k, v]) => [k, [v.median_ms, v.p95_ms, v.total, v.total_kind]])))} indexes ${(await listMetaIndexNames()).join(", ")}`);
  }
}

// ───────────────────────── parent: every store, then the doc ─────────────────────────

function runChild(store: string, env: NodeJS.ProcessEnv): Point[] {
  console.log(`  ${store}: ${SIZES.join(", ")} conversations`);
  const res = spawnSync("npx", ["tsx", "--conditions=react-server", import.meta.filename], {
    cwd: root,
    encoding: "utf8",
    env: { ...env, SCALE_CHILD: store, LOG_LEVEL: "silent" },
    maxBuffer: 64 * 1024 * 1024,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const points = (res.stdout ?? "")
    .split("\n")
    .filter((l) => l.startsWith("SCALE_POINT "))
    .map((l) => JSON.parse(l.slice("SCALE_POINT ".length)) as Point & { store: string });
  for (const p of points) console.log(`  ${JSON.stringify(p)}`);
  if (res.status !== 0) throw new Error(`${store} bench failed (exit ${res.status}):\n${res.stdout}`);
  return points;
}

function table(store: string, points: Point[]): string {
  const names = Object.keys(READS) as ReadName[];
  const head = `| conversations | ${names.map((r) => READS[r]).join(" | ")} | bytes / conversation |`;
  const rule = `|---|${names.map(() => "---").join("|")}|---|`;
  const rows = points.map((p) => {
    const cells = names.map((r) => {
      const t = p.reads[r];
      return `${t.median_ms} / ${t.p95_ms} ms`;
    });
    return `| ${p.conversations.toLocaleString("en-US")} | ${cells.join(" | ")} | ${p.bytes_per_conversation.toLocaleString("en-US")} |`;
  });
  const base = points[0];
  const last = points[points.length - 1];
  const ratio =
    points.length > 1
      ? `\n\n${last.conversations.toLocaleString("en-US")} against ${base.conversations.toLocaleString("en-US")} (p95, median): ` +
        names
          .map((r) => `${READS[r].replace(/`/g, "")} ${(last.reads[r].p95_ms / base.reads[r].p95_ms).toFixed(2)}×, ${(last.reads[r].median_ms / base.reads[r].median_ms).toFixed(2)}×`)
          .join("; ") +
        "."
      : "";
  return `**${store === "sqlite" ? "SQLite" : "PostgreSQL"}** (median / p95 of ${RUNS}; the total of the filtered grid is ${last.reads.meta_filter.total_kind ?? "exact"}):\n\n${head}\n${rule}\n${rows.join("\n")}${ratio}`;
}

const BEGIN = "<!-- scale bench: begin (bench/scale.bench.ts writes this part) -->";
const END = "<!-- scale bench: end -->";

async function parent(): Promise<void> {
  const results: Record<string, Point[]> = {};
  for (const { store, result } of await onEachStore(STORES, { name: "scale", keepSqlite: Boolean(process.env.SCALE_KEEP_DB) }, runChild)) results[store] = result;
  const when = new Date().toISOString().slice(0, 10);
  const section = [
    BEGIN,
    `Measured ${when} on this machine (${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)} at the end) by \`bench/scale.bench.ts\`, reads through the route handlers:`,
    "",
    ...Object.entries(results).flatMap(([store, points]) => [table(store, points), ""]),
    END,
  ].join("\n");
  const doc = path.join(root, "docs", "performance.md");
  if (process.env.SCALE_NO_DOC) {
    console.log(`  SCALE_NO_DOC: docs/performance.md left as it is; the section:\n${section}`);
    console.log(`BENCH_RESULT ${JSON.stringify({ grid_scale: results })}`);
    return;
  }
  const text = fs.readFileSync(doc, "utf8");
  if (text.includes(BEGIN) && text.includes(END)) {
    fs.writeFileSync(doc, text.slice(0, text.indexOf(BEGIN)) + section + text.slice(text.indexOf(END) + END.length));
    console.log("  wrote docs/performance.md");
  } else console.log(`  docs/performance.md has no scale bench markers; the section:\n${section}`);
  console.log(`BENCH_RESULT ${JSON.stringify({ grid_scale: results })}`);
}

(process.env.SCALE_CHILD ? child(process.env.SCALE_CHILD) : parent()).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
