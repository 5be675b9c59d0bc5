/**
 * One statement on a connection of its own, opened and closed around it: for tests that set up,
 * inspect or break a PostgreSQL database beside the pools the code under test uses.
 */
import pg from "pg";

export async function pgResult<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResult<T>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query<T>(text, values);
  } finally {
    await client.end();
  }
}

/** The rows of `pgResult`. */
export async function pgRows<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  return (await pgResult<T>(url, text, values)).rows;
}
