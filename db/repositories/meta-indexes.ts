/**
 * Conversation meta fields the grid filters or sorts on, read through expressions an index can serve, and
 * those indexes made on demand (issue 52). A field's value is written with its path as a literal (not a
 * bound parameter), so the query's expression is the index's: SQLite matches an indexed expression, and
 * PostgreSQL an expression index, only when the query spells the same expression.
 *
 * Each index is on (dataset_id, expression, …, position): within a dataset, an equality filter reads its
 * matching rows already in grid order and a sort reads its first page without sorting the dataset. The
 * first grid read that filters or sorts a dataset of at least META_INDEX_MIN_CONVERSATIONS conversations
 * on a field without its index starts building it in the background (that read and the ones until the
 * index is ready scan as before); SQLite builds it on a thread with a connection of its own so the server
 * keeps answering (writers wait for it, as for any write), PostgreSQL builds it CONCURRENTLY. The index
 * covers the field in every dataset; its name says which field and which use.
 */
import "server-only";
import { createHash } from "node:crypto";
import { Worker } from "node:worker_threads";
import { sql, type SQL } from "drizzle-orm";
import { processSingleton } from "@/lib/process-state";
import { dialect } from "../dialect";
import { getDb } from "../sqlite-database";
import { rawRows, rawRun } from "../store";

/** Datasets smaller than this are read fast enough by scanning: no index is made for them. */
export const META_INDEX_MIN_CONVERSATIONS = 10_000;

/** What an index serves: a filter comparing text, one comparing numbers, an ascending or a descending sort. */
export type MetaIndexUse = "text" | "number" | "asc" | "desc";

const isPg = () => dialect.name === "postgres";
const keysOf = (path: string) => path.split(".").map((k) => k.replace(/[^A-Za-z0-9_-]/g, ""));

/** The field as text (PostgreSQL) or as SQLite's `->>` gives it (numbers as numbers), over the column `col`. */
function textExpr(col: string, path: string): string {
  const keys = keysOf(path);
  return isPg() ? `(${col} #>> '{${keys.map((k) => `"${k}"`).join(",")}}'::text[])` : `(${col} ->> '$${keys.map((k) => `."${k}"`).join("")}')`;
}

/** The field as a number: numbers, and booleans as 1/0 (PostgreSQL; SQLite's `->>` already gives them so). */
function numberExpr(col: string, path: string): string {
  if (!isPg()) return textExpr(col, path);
  const p = `'{${keysOf(path).map((k) => `"${k}"`).join(",")}}'::text[]`;
  return `(case json_typeof(${col} #> ${p}) when 'number' then (${col} #>> ${p})::double precision when 'boolean' then case when (${col} #>> ${p}) = 'true' then 1 else 0 end end)`;
}

const QUERY_COLUMN = `"conversations"."meta"`;

/** The conversation's meta field for a filter: a number comparison reads numbers, a text one text. */
export function metaFilterValue(path: string, numeric: boolean): SQL {
  return sql.raw(numeric ? numberExpr(QUERY_COLUMN, path) : textExpr(QUERY_COLUMN, path));
}

/**
 * The ORDER BY terms of a sort on a meta field, before the grid's own order (position): numbers before
 * text, as SQLite orders mixed values, and rows without the field last either way. Written as the sort
 * indexes below list their columns, so an index walk gives the page.
 */
export function metaSortTerms(path: string, descending: boolean): SQL[] {
  const dir = descending ? " desc" : "";
  if (isPg()) {
    const t = textExpr(QUERY_COLUMN, path);
    return [sql.raw(`(${t} is null)`), sql.raw(numberExpr(QUERY_COLUMN, path) + dir), sql.raw(t + dir)];
  }
  const e = textExpr(QUERY_COLUMN, path);
  // SQLite orders NULL first: descending already puts rows without the field last.
  return descending ? [sql.raw(`${e} desc`)] : [sql.raw(`(${e} is null)`), sql.raw(e)];
}

/** The index's columns for one use of a field (after dataset_id; position last). */
function indexColumns(path: string, use: MetaIndexUse): string {
  const t = textExpr("meta", path);
  const n = numberExpr("meta", path);
  if (isPg()) {
    if (use === "text") return `${t}, position`;
    if (use === "number") return `${n}, position`;
    return use === "asc" ? `(${t} is null), ${n}, ${t}, position` : `(${t} is null), ${n} desc, ${t} desc, position`;
  }
  if (use === "asc") return `(${t} is null), ${t}, position`;
  if (use === "desc") return `${t} desc, position`;
  return `${t}, position`;
}

/** The index's name: the use (SQLite reads text and numbers alike: one filter index) and a hash of the path. */
export function metaIndexName(path: string, use: MetaIndexUse): string {
  const kind = !isPg() && (use === "text" || use === "number") ? "filter" : use;
  return `conversations_meta_${kind}_${createHash("sha1").update(path).digest("hex").slice(0, 12)}`;
}

type State = { known: Set<string>; building: Map<string, Promise<void>>; chain: Promise<void>; failures: Map<string, string> };
const state = processSingleton("meta-indexes", (): State => ({ known: new Set(), building: new Map(), chain: Promise.resolve(), failures: new Map() }));

/** Whether the index exists (and, on PostgreSQL, finished building). */
async function exists(name: string): Promise<boolean> {
  if (state.known.has(name)) return true;
  const rows = isPg()
    ? await rawRows<{ ok: boolean }>("select i.indisvalid as ok from pg_class c join pg_index i on i.indexrelid = c.oid where c.relname = ?", [name])
    : await rawRows<{ ok: number }>("select 1 as ok from sqlite_master where type = 'index' and name = ?", [name]);
  const ok = rows.length > 0 && Boolean(rows[0].ok);
  if (ok) state.known.add(name);
  return ok;
}

/** CREATE INDEX on SQLite, from a thread with its own connection: the event loop keeps serving. */
function buildOnThread(file: string, ddl: string): Promise<void> {
  const source = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require("better-sqlite3");
const db = new Database(workerData.file, { fileMustExist: true });
try {
  db.pragma("busy_timeout = 30000");
  db.exec(workerData.ddl);
  parentPort.postMessage({ ok: true });
} catch (error) {
  parentPort.postMessage({ error: String((error && error.message) || error) });
} finally {
  db.close();
}`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData: { file, ddl } });
    worker.once("message", (m: { ok?: boolean; error?: string }) => (m.error ? reject(new Error(m.error)) : resolve()));
    worker.once("error", reject);
  });
}

async function build(name: string, path: string, use: MetaIndexUse): Promise<void> {
  if (await exists(name)) return;
  if (isPg()) {
    // A build that failed half-way leaves an invalid index behind: drop it and start again.
    await rawRun(`drop index concurrently if exists ${name}`);
    await rawRun(`create index concurrently if not exists ${name} on conversations (dataset_id, ${indexColumns(path, use)})`);
    // The planner knows an expression's values only from the statistics ANALYZE gathers for its index.
    await rawRun("analyze conversations");
  } else {
    const file = getDb().$client.name;
    // Then statistics (a sample of 1,000 rows per index: milliseconds): without them SQLite's planner took a
    // numeric range's index and sorted its matches over an equality's index that reads the page in order.
    const ddl = `create index if not exists ${name} on conversations (dataset_id, ${indexColumns(path, use)}); pragma analysis_limit = 1000; analyze conversations;`;
    if (!file || file === ":memory:") await rawRun(ddl);
    else await buildOnThread(file, ddl);
  }
  state.known.add(name);
}

/**
 * Make the index of each (path, use) in the background unless it exists or is being made. Returns at
 * once; `metaIndexesSettled` waits for the builds started so far.
 */
export function ensureMetaIndexes(wanted: Array<{ path: string; use: MetaIndexUse }>, onError: (message: string) => void = () => {}): void {
  for (const { path, use } of wanted) {
    const name = metaIndexName(path, use);
    if (state.known.has(name) || state.building.has(name) || state.failures.has(name)) continue;
    const job = state.chain.then(() =>
      build(name, path, use).catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        state.failures.set(name, message);
        onError(`meta index ${name} (${path}, ${use}): ${message}`);
      }),
    );
    state.building.set(name, job);
    state.chain = job.finally(() => state.building.delete(name));
  }
}

/** Wait for every index build started so far (tests, the scale bench). */
export async function metaIndexesSettled(): Promise<void> {
  await state.chain;
}

/** The meta indexes that exist now, by name. */
export async function listMetaIndexNames(): Promise<string[]> {
  const rows = isPg()
    ? await rawRows<{ name: string }>("select c.relname as name from pg_class c join pg_index i on i.indexrelid = c.oid where c.relname like 'conversations_meta_%' and i.indisvalid order by 1")
    : await rawRows<{ name: string }>("select name from sqlite_master where type = 'index' and name like 'conversations_meta_%' order by 1");
  return rows.map((r) => r.name);
}
