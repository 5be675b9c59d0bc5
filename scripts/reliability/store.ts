/**
 * The store the reliability suite's servers run on: a SQLite file per server (the default), or with
 * `--store postgres` (or RELIABILITY_STORE=postgres) a fresh database per server in one throwaway
 * PostgreSQL cluster (scripts/pg-test-server.mjs), stopped at the end. The crash sections read the store
 * directly (row counts, SQLite's integrity check) through the helpers here.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { startPgTestServer, type PgTestServer } from "../pg-test-server.mjs";

export type StoreKind = "sqlite" | "postgres";
/** Where one server keeps its data: always a SQLite path, and a PostgreSQL URL that overrides it. */
export type DatabaseLocation = { databasePath: string; databaseUrl?: string };

export function storeKindFromArgs(argv: string[], env: NodeJS.ProcessEnv): StoreKind {
  const flag = argv.flatMap((a, i) => (argv[i - 1] === "--store" ? [a] : [])).at(-1) ?? argv.find((a) => a.startsWith("--store="))?.slice(8);
  const kind = flag ?? env.RELIABILITY_STORE ?? "sqlite";
  if (kind !== "sqlite" && kind !== "postgres") throw new Error(`--store (RELIABILITY_STORE) must be sqlite or postgres, not ${kind}`);
  return kind;
}

export class ReliabilityStore {
  private constructor(
    readonly kind: StoreKind,
    private readonly dir: string,
    private readonly cluster: PgTestServer | undefined,
  ) {}

  static async open(kind: StoreKind): Promise<ReliabilityStore> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-reliability-"));
    return new ReliabilityStore(kind, dir, kind === "postgres" ? await startPgTestServer() : undefined);
  }

  /** A new, empty database for one server. */
  async database(name: string): Promise<DatabaseLocation> {
    const databasePath = path.join(this.dir, `${name}.db`);
    if (!this.cluster) return { databasePath };
    const admin = new pg.Client({ connectionString: this.cluster.url });
    await admin.connect();
    try {
      await admin.query(`create database ${name}`);
    } finally {
      await admin.end();
    }
    const url = new URL(this.cluster.url);
    url.pathname = `/${name}`;
    return { databasePath, databaseUrl: url.toString() };
  }

  async close(): Promise<void> {
    await this.cluster?.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Rows of the imported tables, read from the store directly (the server may be dead). */
export async function rowCounts(db: DatabaseLocation): Promise<{ datasets: number; conversations: number; messages: number; steps: number }> {
  const tables = ["datasets", "conversations", "messages", "steps"] as const;
  const counts: Record<string, number> = {};
  if (db.databaseUrl) {
    const client = new pg.Client({ connectionString: db.databaseUrl });
    await client.connect();
    try {
      for (const t of tables) counts[t] = Number((await client.query<{ n: string }>(`select count(*) as n from ${t}`)).rows[0].n);
    } finally {
      await client.end();
    }
  } else {
    const sqlite = new Database(db.databasePath, { readonly: true });
    try {
      for (const t of tables) counts[t] = (sqlite.prepare(`select count(*) as n from ${t}`).get() as { n: number }).n;
    } finally {
      sqlite.close();
    }
  }
  return { datasets: counts.datasets, conversations: counts.conversations, messages: counts.messages, steps: counts.steps };
}

/**
 * SQLite's `PRAGMA integrity_check` of the file a killed server was writing. On PostgreSQL there is no
 * such file to check: the killed process is a client, the database server keeps running and rolls back
 * the dead connection's open transaction — so the check is "not applicable", reported as such.
 */
export function sqliteIntegrity(db: DatabaseLocation): string | null {
  if (db.databaseUrl) return null;
  const sqlite = new Database(db.databasePath, { readonly: true, fileMustExist: true });
  try {
    return (sqlite.pragma("integrity_check", { simple: true }) as string) ?? "unknown";
  } finally {
    sqlite.close();
  }
}

/**
 * PostgreSQL: what a stopped server left of a run in the queue — its batches still `active` (claimed,
 * so they come back only once their lease runs out) — and the semaphore rows still held or waited on
 * (freed only when their leases run out). A server that drained on SIGTERM leaves none of either.
 */
export async function leftInQueue(db: DatabaseLocation, executionId: number): Promise<{ activeBatches: number; semaphoreRows: number } | null> {
  if (!db.databaseUrl) return null;
  const client = new pg.Client({ connectionString: db.databaseUrl });
  await client.connect();
  try {
    const active = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'turnscope-cells' AND state = 'active' AND data->>'executionId' = $1`,
      [String(executionId)],
    );
    // The server was the only process of its database: every row left is one it did not give back.
    const slots = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM turnscope_semaphore`);
    return { activeBatches: active.rows[0].n, semaphoreRows: slots.rows[0].n };
  } finally {
    await client.end();
  }
}
