import "server-only";
import { sql } from "drizzle-orm";
import { getDb } from "../client";

/** True when the database opens and answers a query. */
export async function pingDatabase(): Promise<boolean> {
  try {
    return getDb().get<{ ok: number }>(sql`select 1 as ok`)?.ok === 1;
  } catch {
    return false;
  }
}
