/** Saved import mappings: the only place the saved_mappings table is queried. */
import "server-only";
import { and, asc, eq } from "drizzle-orm";
import type { SavedMappingRow } from "../schema";
import { changes, database, first, rows, transaction } from "../store";
import { savedMappingsTable } from "../tables";

/** Insert, or replace the mapping of the user's mapping of that name; `created` says which. */
export async function upsertSavedMapping(values: { userId: string; name: string; mapping: unknown }): Promise<{ row: SavedMappingRow; created: boolean }> {
  return transaction(function* (tx) {
    const [existing] = yield* rows(
      tx
        .select({ id: savedMappingsTable.id })
        .from(savedMappingsTable)
        .where(and(eq(savedMappingsTable.userId, values.userId), eq(savedMappingsTable.name, values.name))),
    );
    if (existing) {
      const [row] = yield* rows(
        tx
          .update(savedMappingsTable)
          .set({ mapping: values.mapping, updatedAt: new Date().toISOString() })
          .where(eq(savedMappingsTable.id, existing.id))
          .returning(),
      );
      return { row, created: false };
    }
    const [row] = yield* rows(tx.insert(savedMappingsTable).values(values).returning());
    return { row, created: true };
  });
}

export async function listSavedMappingRows(userId: string): Promise<SavedMappingRow[]> {
  const db = await database();
  return db.select().from(savedMappingsTable).where(eq(savedMappingsTable.userId, userId)).orderBy(asc(savedMappingsTable.name), asc(savedMappingsTable.id));
}

/** The user's mapping with this id; another user's is not found, as if it did not exist. */
export async function getSavedMappingRow(id: number, userId: string): Promise<SavedMappingRow | undefined> {
  const db = await database();
  return first(await db.select().from(savedMappingsTable).where(and(eq(savedMappingsTable.id, id), eq(savedMappingsTable.userId, userId))));
}

/** Delete the user's mapping; false when there is none with that id. */
export async function deleteSavedMappingRow(id: number, userId: string): Promise<boolean> {
  const db = await database();
  return changes(await db.delete(savedMappingsTable).where(and(eq(savedMappingsTable.id, id), eq(savedMappingsTable.userId, userId)))) > 0;
}
