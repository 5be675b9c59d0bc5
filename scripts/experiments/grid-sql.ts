/**
 * The SQLite cost of the load test's read queries, measured on the database the load section builds
 * (2,500 agent conversations, 3 metrics, a 2,500-cell and a 10,000-cell run), outside the server so that
 * nothing but the query is timed. Compares the grid's step page as db/repositories/grid.ts writes it
 * (every step of the dataset joined, labelled with json_* and sorted, then OFFSET) with the same page
 * ordered on ids only and labelled for the 50 rows kept; and a prepared statement re-used vs one
 * prepared per call (what drizzle's one-time queries do).
 *
 *   npx tsx scripts/experiments/grid-sql.ts [--conversations 2500] [--db path-to-keep-or-reuse.db]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { startJudgeDouble } from "@/lib/testing/judge-double/server";
import { ensureBuild } from "../project.mjs";
import { addMetrics, agentConversations, importDataset, startRun, waitFinal } from "../reliability/data";
import { TurnscopeServer } from "../reliability/server";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const conversations = Number(arg("conversations", "2500"));
const dbPath = arg("db", path.join(fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-gridsql-")), "main.db"));

async function build(): Promise<void> {
  ensureBuild();
  const double = await startJudgeDouble({ logger: () => {} });
  double.setLatency({ min: 1, max: 4 });
  const server = new TurnscopeServer({
    port: Number(process.env.RELIABILITY_PORT ?? 3630) + 4,
    databasePath: dbPath,
    env: { OPENAI_BASE_URL: double.baseURL, OPENAI_API_KEY: "sk-grid-sql", LOG_LEVEL: "warn" },
  });
  await server.start();
  try {
    const { datasetId } = await importDataset(server, "load", agentConversations(conversations, "load"));
    const metrics = await addMetrics(server, datasetId);
    const small = await startRun(server, { dataset_id: datasetId, pipeline_node_id: metrics.msg, entity_type: null, execution_mode: "async", batch_size: 8 });
    await waitFinal(server, small.id, 300_000);
    const big = await startRun(server, { dataset_id: datasetId, execution_mode: "async", batch_size: 16 });
    await waitFinal(server, big.id, 15 * 60_000);
  } finally {
    await server.stop("SIGTERM");
    await double.close();
  }
}

/** Median and p90 of `n` timed calls, in ms. */
function time(n: number, fn: (i: number) => unknown): { median: number; p90: number } {
  for (let i = 0; i < 20; i++) fn(i);
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    fn(i);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return { median: r(ms[Math.floor(n / 2)]), p90: r(ms[Math.floor(n * 0.9)]) };
}

const labelColumns = `s.id, s.message_id, s.conversation_id, s.position, m.role,
  (s.thinking is not null and s.thinking <> '') as has_thinking,
  (s.tool_call is not null and s.tool_call <> 'null') as has_tool_call,
  (s.tool_result is not null and s.tool_result <> 'null') as has_tool_result,
  (s.output_content is not null and s.output_content <> '') as has_output,
  case when json_valid(s.tool_call) and json_type(s.tool_call) = 'object' then cast(json_extract(s.tool_call, '$.name') as text) end as tool_name`;

/** As db/repositories/grid.ts listStepPage builds it (drizzle's SQL, written out). */
const currentStepPage = `select ${labelColumns}
  from steps s
  inner join messages m on m.id = s.message_id
  inner join conversations c on c.id = s.conversation_id
  where s.dataset_id = ?
  order by c.position asc, m.position asc, s.position asc
  limit ? offset ?`;

/** The same page: order and skip on ids only, then label just the rows kept. */
const deferredStepPage = `with page as (
    select s.id, c.position as cp, m.position as mp, s.position as sp
    from steps s
    inner join messages m on m.id = s.message_id
    inner join conversations c on c.id = s.conversation_id
    where s.dataset_id = ?
    order by c.position asc, m.position asc, s.position asc
    limit ? offset ?)
  select ${labelColumns}
  from page
  inner join steps s on s.id = page.id
  inner join messages m on m.id = s.message_id
  order by page.cp, page.mp, page.sp`;

/** The same page walked in index order (conversation → message → step positions): no sort, no temp B-tree. */
const indexOrderStepPage = `select ${labelColumns}
  from conversations c
  cross join messages m on m.conversation_id = c.id
  cross join steps s on s.message_id = m.id
  where c.dataset_id = ?
  order by c.position asc, m.position asc, s.position asc
  limit ? offset ?`;

const stepCount = `select count(*) as n from steps s inner join conversations c on c.id = s.conversation_id where s.dataset_id = ?`;

async function main() {
  if (!fs.existsSync(dbPath)) await build();
  const db = new Database(dbPath, { readonly: true });
  const datasetId = (db.prepare("select id from datasets where name = 'load' order by id desc limit 1").get() as { id: number }).id;
  const steps = (db.prepare(stepCount).get(datasetId) as { n: number }).n;
  const offsets = Array.from({ length: 200 }, (_, i) => Math.floor(((i * 7919) % 1000) / 1000 * steps));

  const current = db.prepare(currentStepPage);
  const deferred = db.prepare(deferredStepPage);
  const indexOrder = db.prepare(indexOrderStepPage);
  // Same rows, same order.
  for (const offset of [0, Math.floor(steps / 2), steps - 50]) {
    const a = JSON.stringify(current.all(datasetId, 50, offset));
    const b = JSON.stringify(deferred.all(datasetId, 50, offset));
    if (a !== b) throw new Error(`deferred page differs at offset ${offset}`);
    if (a !== JSON.stringify(indexOrder.all(datasetId, 50, offset))) throw new Error(`index-order page differs at offset ${offset}`);
  }
  const plan = (sql: string) => (db.prepare(`explain query plan ${sql}`).all(datasetId, 50, 0) as Array<{ detail: string }>).map((r) => r.detail);
  const nodeIds = (db.prepare("select id from pipeline_nodes where dataset_id = ? and evaluation_level = 'step'").all(datasetId) as Array<{ id: number }>).map((r) => r.id);
  const pageIds = (offset: number) => (deferred.all(datasetId, 50, offset) as Array<{ id: number }>).map((r) => r.id);
  const latestSql = (n: number) =>
    `select r.* from evaluation_results r inner join (select max(id) as latest_id from evaluation_results where pipeline_node_id in (${nodeIds.map(() => "?").join(",")}) and entity_type = 'step' and entity_id in (${Array.from({ length: n }, () => "?").join(",")}) group by pipeline_node_id, entity_id) latest on latest.latest_id = r.id`;
  const ids = offsets.map(pageIds);
  const latest = db.prepare(latestSql(50));

  const report = {
    database: dbPath,
    steps,
    plan_current: plan(currentStepPage),
    plan_deferred: plan(deferredStepPage),
    plan_index_order: plan(indexOrderStepPage),
    step_page_current_ms: time(400, (i) => current.all(datasetId, 50, offsets[i % offsets.length])),
    step_page_deferred_ms: time(400, (i) => deferred.all(datasetId, 50, offsets[i % offsets.length])),
    step_page_index_order_ms: time(400, (i) => indexOrder.all(datasetId, 50, offsets[i % offsets.length])),
    step_page_current_prepared_each_call_ms: time(400, (i) => db.prepare(currentStepPage).all(datasetId, 50, offsets[i % offsets.length])),
    step_count_ms: time(400, () => db.prepare(stepCount).get(datasetId)),
    step_latest_results_ms: time(400, (i) => latest.all(...nodeIds, ...ids[i % ids.length])),
    step_latest_results_prepared_each_call_ms: time(400, (i) => db.prepare(latestSql(50)).all(...nodeIds, ...ids[i % ids.length])),
    prepare_only_latest_results_ms: time(400, () => db.prepare(latestSql(50))),
  };
  console.log(JSON.stringify(report, null, 2));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
