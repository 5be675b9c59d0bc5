/** Saved import mappings: the only place the saved_mappings table is queried. */
import "server-only";
import { and, asc, eq, sql } from "drizzle-orm";
import { getDb } from "../client";
import { savedMappingsTable, type SavedMappingRow } from "../schema";

/** Insert, or replace the mapping of the user's mapping of that name; `created` says which. */
export async function upsertSavedMapping(values: { userId: string; name: string; mapping: unknown }): Promise<{ row: SavedMappingRow; created: boolean }> {
  return getDb().transaction((tx) => {
    const existing = tx
      .select({ id: savedMappingsTable.id })
      .from(savedMappingsTable)
      .where(and(eq(savedMappingsTable.userId, values.userId), eq(savedMappingsTable.name, values.name)))
      .get();
    if (existing) {
      const row = tx
        .update(savedMappingsTable)
        .set({ mapping: values.mapping, updatedAt: sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))` })
        .where(eq(savedMappingsTable.id, existing.id))
        .returning()
        .get();
      return { row, created: false };
    }
    return { row: tx.insert(savedMappingsTable).values(values).returning().get(), created: true };
  });
}

export async function listSavedMappingRows(userId: string): Promise<SavedMappingRow[]> {
  return getDb().select().from(savedMappingsTable).where(eq(savedMappingsTable.userId, userId)).orderBy(asc(savedMappingsTable.name), asc(savedMappingsTable.id)).all();
}

/** The user's mapping with this id; another user's is not found, as if it did not exist. */
export async function getSavedMappingRow(id: number, userId: string): Promise<SavedMappingRow | undefined> {
  return getDb()
    .select()
    .from(savedMappingsTable)
    .where(and(eq(savedMappingsTable.id, id), eq(savedMappingsTable.userId, userId)))
    .get();
}

/** Delete the user's mapping; false when there is none with that id. */
export async function deleteSavedMappingRow(id: number, userId: string): Promise<boolean> {
  const result = getDb()
    .delete(savedMappingsTable)
    .where(and(eq(savedMappingsTable.id, id), eq(savedMappingsTable.userId, userId)))
    .run();
  return result.changes > 0;
}
