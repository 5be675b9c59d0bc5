/**
 * The small node-postgres pool the cluster modules (queue bookkeeping, semaphore, notify's publisher)
 * share, one per database URL per process. Separate from db/pg.ts's pool on purpose: a run that fills
 * every repository connection must not keep a judge call from releasing its semaphore slot.
 */
import "server-only";
import pg from "pg";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";

/** Connections per process for cluster coordination: short queries, never held across a judge call. */
const clusterPoolSize = 4;

type Pools = Map<string, pg.Pool>;

function pools(): Pools {
  return processSingleton<Pools>("cluster.pools", () => new Map());
}

/** The cluster pool for `url`, opened on first use. */
export function clusterPool(url: string): pg.Pool {
  const all = pools();
  let pool = all.get(url);
  if (!pool) {
    pool = new pg.Pool({ connectionString: url, max: clusterPoolSize, application_name: "turnscope-cluster" });
    // A connection the server drops while idle must not crash the process: the pool replaces it.
    pool.on("error", (err) => log.warn("cluster pool: idle connection failed", { err }));
    all.set(url, pool);
  }
  return pool;
}

/** `body` on one connection of `pool` inside BEGIN … COMMIT; rolled back when it throws. */
export async function clusterTransaction<T>(pool: pg.Pool, body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await body(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Close every cluster pool of this process (shutdown, tests). */
export async function closeClusterPools(): Promise<void> {
  const all = pools();
  const open = [...all.values()];
  all.clear();
  await Promise.all(open.map((p) => p.end().catch(() => undefined)));
}

/** `url`, or DATABASE_URL when none is given. */
export function clusterUrl(url?: string): string {
  const chosen = url ?? getConfig().DATABASE_URL;
  if (!chosen) throw new Error("DATABASE_URL is not set: the cluster features need the PostgreSQL store");
  return chosen;
}
