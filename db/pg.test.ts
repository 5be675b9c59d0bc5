/**
 * The PostgreSQL store against a real throwaway PostgreSQL test server (scripts/pg-test-server.mjs): migrations, the
 * column mapping that makes rows look as they do on SQLite, and migrators started at once.
 * Skipped, saying why, only where PostgreSQL is not installed.
 */
import fs from "node:fs";
import path from "node:path";
import { asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/lib/config";
import { pgRows as query } from "@/lib/testing/setup/pg-query";
import { findPgBinDir, startPgTestServer, type PgTestServer } from "@/scripts/pg-test-server.mjs";
import { sessionClient } from "@/lib/pg-session";
import { closePgDb, getPgDb, migratePg, openPg, type OpenPg } from "./pg";
import { conversationsTable, datasetsTable, messagesTable, pipelineExecutionsTable } from "./schema.pg";
import { is } from "drizzle-orm";
import { PgTable } from "drizzle-orm/pg-core";
import * as pgSchema from "./schema.pg";

const binDir = findPgBinDir();
const title = binDir
  ? "PostgreSQL store"
  : "PostgreSQL store — SKIPPED: no PostgreSQL binaries (install Debian's postgresql package or set PG_BINDIR)";
if (!binDir) console.warn(`${title}`);

const isoUtcMillis = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const journal = JSON.parse(fs.readFileSync(path.join(process.cwd(), "db/migrations-pg/meta/_journal.json"), "utf8")) as {
  entries: unknown[];
};


/** A fresh, empty database in the cluster, so a test sees the migrations run from nothing. */
async function freshDatabase(cluster: PgTestServer, name: string): Promise<string> {
  await query(cluster.url, `create database "${name}"`);
  return cluster.url.replace(/\/[^/]*$/, `/${name}`);
}

describe.skipIf(!binDir)(title, () => {
  let cluster: PgTestServer;
  let open: OpenPg;

  beforeAll(async () => {
    cluster = await startPgTestServer();
    open = await openPg({ url: cluster.url, poolSize: 4 });
  }, 120_000);

  afterAll(async () => {
    await open?.close();
    await cluster?.stop();
    if (cluster) expect(fs.existsSync(cluster.dir)).toBe(false);
  });

  it("migrates to the tables of the schema and records each migration once", async () => {
    const tables = await query<{ table_name: string }>(
      cluster.url,
      "select table_name from information_schema.tables where table_schema = 'public' order by table_name",
    );
    expect(tables.map((t) => t.table_name)).toEqual(
      expect.arrayContaining(["datasets", "conversations", "messages", "steps", "evaluation_results", "saved_mappings"]),
    );
    const applied = await query<{ n: string }>(cluster.url, "select count(*)::text as n from drizzle.__drizzle_migrations");
    expect(Number(applied[0].n)).toBe(journal.entries.length);
  });

  it("inserts a dataset, conversation and message and reads them back as the SQLite store would", async () => {
    const { db } = open;
    const before = Date.now();
    const [dataset] = await db.insert(datasetsTable).values({ name: "Support chats" }).returning();
    const after = Date.now();
    expect(dataset.id).toBeTypeOf("number");
    expect(dataset.userId).toBe("default");
    // The default writes the text SQLite's strftime('%Y-%m-%dT%H:%M:%fZ', 'now') does.
    expect(dataset.createdAt).toMatch(isoUtcMillis);
    expect(new Date(dataset.createdAt).toISOString()).toBe(dataset.createdAt);
    expect(Date.parse(dataset.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(dataset.createdAt)).toBeLessThanOrEqual(after + 1000);
    expect(dataset.updatedAt).toBe(dataset.createdAt);

    // Key order as given, not sorted or shortest-first as jsonb would store it; nested and Unicode too.
    const meta = { zebra: 1, alpha: { yak: [3, 1, 2], bee: null }, "mid key": "é ✓", aa: true };
    const [conversation] = await db
      .insert(conversationsTable)
      .values({ datasetId: dataset.id, position: 0, name: "first", meta, agents: ["triage", "billing"] })
      .returning();
    await db.insert(messagesTable).values([
      { conversationId: conversation.id, datasetId: dataset.id, position: 0, role: "user", content: "Hello" },
      { conversationId: conversation.id, datasetId: dataset.id, position: 1, role: "assistant", content: "Hi!", meta: { b: 2, a: 1 } },
    ]);

    const [readConversation] = await db.select().from(conversationsTable).where(eq(conversationsTable.id, conversation.id));
    expect(JSON.stringify(readConversation.meta)).toBe(JSON.stringify(meta));
    expect(readConversation.agents).toEqual(["triage", "billing"]);
    const stored = await query<{ meta: string }>(cluster.url, "select meta::text as meta from conversations where id = $1", [
      conversation.id,
    ]);
    expect(stored[0].meta).toBe(JSON.stringify(meta));

    const messages = await db
      .select()
      .from(messagesTable)
      .where(eq(messagesTable.conversationId, conversation.id))
      .orderBy(asc(messagesTable.position));
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "Hello"],
      ["assistant", "Hi!"],
    ]);
    expect(messages[0].meta).toBeNull();
    expect(Object.keys(messages[1].meta as object)).toEqual(["b", "a"]);
    expect(messages[1].createdAt).toMatch(isoUtcMillis);

    // count(*) is int8 and avg() of integers numeric: both read as JS numbers, as on SQLite.
    const counted = await db.execute<{ n: unknown; avg: unknown }>(
      sql`select count(*) as n, avg(${messagesTable.position}) as avg from ${messagesTable} where ${messagesTable.datasetId} = ${dataset.id}`,
    );
    expect(counted.rows[0]).toEqual({ n: 2, avg: 0.5 });

    // JSON defaults and booleans come back typed, deletes cascade as on SQLite.
    const [execution] = await db.insert(pipelineExecutionsTable).values({ datasetId: dataset.id }).returning();
    expect(execution).toMatchObject({ status: "pending", errors: [], meta: {}, totalEvaluations: 0 });
    await db.delete(datasetsTable).where(eq(datasetsTable.id, dataset.id));
    expect(await db.select().from(messagesTable).where(eq(messagesTable.datasetId, dataset.id))).toEqual([]);
    expect(await db.select().from(pipelineExecutionsTable).where(eq(pipelineExecutionsTable.datasetId, dataset.id))).toEqual([]);
  });

  it("keeps the schema's constraints: unique positions and the result status check", async () => {
    const { db } = open;
    const [dataset] = await db.insert(datasetsTable).values({ name: "constraints" }).returning();
    await db.insert(conversationsTable).values({ datasetId: dataset.id, position: 0 });
    await expect(db.insert(conversationsTable).values({ datasetId: dataset.id, position: 0 })).rejects.toMatchObject({
      cause: { code: "23505" },
    });
    await expect(
      query(cluster.url, "insert into evaluation_results (execution_id, pipeline_node_id, dataset_id, entity_type, entity_id, conversation_id, status) values (1, 1, 1, 'message', 1, 1, 'bogus')"),
    ).rejects.toMatchObject({ code: "23514" });
  });

  it("lets several processes' migrators start at once against an empty database", async () => {
    const url = await freshDatabase(cluster, "concurrent_migrators");
    // Each migrator is its own connection, as separate processes would be; without the advisory lock
    // they race on CREATE SCHEMA drizzle / CREATE TABLE and all but one fail.
    const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () => migratePg(url)));
    expect(outcomes.filter((o) => o.status === "rejected")).toEqual([]);
    const applied = await query<{ n: string }>(url, "select count(*)::text as n from drizzle.__drizzle_migrations");
    expect(Number(applied[0].n)).toBe(journal.entries.length);
    const tables = await query<{ n: string }>(url, "select count(*)::text as n from information_schema.tables where table_schema = 'public'");
    // Every table of the schema, and only those (no half-created duplicates from a race).
    expect(Number(tables[0].n)).toBe(Object.values(pgSchema).filter((t) => is(t, PgTable)).length);
    // And a later start finds nothing to do.
    await migratePg(url);
    const again = await query<{ n: string }>(url, "select count(*)::text as n from drizzle.__drizzle_migrations");
    expect(Number(again[0].n)).toBe(journal.entries.length);
  });

  it("opens the process-wide handle once from DATABASE_URL and DATABASE_POOL_SIZE", async () => {
    const url = await freshDatabase(cluster, "from_config");
    process.env.DATABASE_URL = url;
    process.env.DATABASE_POOL_SIZE = "3";
    resetConfig();
    try {
      const [a, b] = await Promise.all([getPgDb(), getPgDb()]);
      expect(a).toBe(b);
      expect(a.$client.options.max).toBe(3);
      const [row] = await a.insert(datasetsTable).values({ name: "via config" }).returning();
      expect(row.name).toBe("via config");
    } finally {
      await closePgDb();
      delete process.env.DATABASE_URL;
      delete process.env.DATABASE_POOL_SIZE;
      resetConfig();
    }
  });

  it("work whose settings are older than the environment's cannot close the store open now", async () => {
    // A test file's leftover work (its modules read that file's DATABASE_URL) asked for its store while
    // the next file's was open: it closed the open pool, and the next file's queries failed with "Cannot
    // use a pool after calling end on the pool".
    const now = await freshDatabase(cluster, "open_now");
    const before = now.replace(/\/[^/]+$/, "/closed_before");
    process.env.DATABASE_URL = now;
    resetConfig();
    try {
      const open = await getPgDb();
      process.env.DATABASE_URL = before;
      resetConfig();
      await import("@/lib/config").then(({ getConfig }) => getConfig()); // settings read then, and kept
      process.env.DATABASE_URL = now; // the environment moved on; those settings did not
      await expect(getPgDb()).rejects.toThrow(/DATABASE_URL changed since/);
      const [row] = await open.insert(datasetsTable).values({ name: "still open" }).returning();
      expect(row.name).toBe("still open");
      resetConfig();
      expect(await getPgDb()).toBe(open);
    } finally {
      await closePgDb();
      delete process.env.DATABASE_URL;
      resetConfig();
    }
  });

  it("a session the server ends while it sits idle fails its own work, never the process", async () => {
    // CI: DROP DATABASE … WITH (FORCE) ended the queue set-up's session while pg-boss started; node-postgres
    // emitted "error" on a client with no listener, an uncaught exception that took the process down.
    const url = await freshDatabase(cluster, "session_ended");
    const session = sessionClient(url, "turnscope-test-session");
    const ended = new Promise<void>((resolve) => session.once("end", () => resolve()));
    await session.connect();
    const [{ pid }] = (await session.query<{ pid: number }>("select pg_backend_pid() as pid")).rows;
    await query(cluster.url, "select pg_terminate_backend($1)", [pid]);
    await ended;
    await expect(session.query("select 1")).rejects.toThrow(/not queryable|terminat/i);
    await session.end().catch(() => undefined);
  });

  it("refuses a DATABASE_URL that is not a PostgreSQL URL, naming the variable", async () => {
    process.env.DATABASE_URL = "mysql://localhost/turnscope";
    resetConfig();
    try {
      await expect(getPgDb()).rejects.toThrow(/DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/);
    } finally {
      delete process.env.DATABASE_URL;
      resetConfig();
    }
  });
});
