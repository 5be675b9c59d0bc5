/**
 * Saved import mappings: a mapping that read one file, kept under a name so the next file of the same
 * shape imports with it (`mapping_id` on the import endpoints, or picked on the import page). Each
 * user sees and uses only their own.
 */
import "server-only";
import { deleteSavedMappingRow, getSavedMappingRow, listSavedMappingRows, upsertSavedMapping } from "@/db/repositories/saved-mappings";
import type { SavedMappingRow } from "@/db/schema";
import { notFound } from "@/lib/errors";
import { anyImportMappingSchema, type AnyImportMapping, type CreateSavedMappingBody, type SavedMapping } from "@/lib/schemas/imports";

function toWire(row: SavedMappingRow): SavedMapping {
  // Stored only after the schema accepted it; parsed again so a hand-edited row cannot reach an import unchecked.
  const mapping = anyImportMappingSchema.parse(row.mapping);
  return { id: row.id, name: row.name, mapping, created_at: row.createdAt, updated_at: row.updatedAt };
}

export async function saveMapping(body: CreateSavedMappingBody, userId: string): Promise<{ mapping: SavedMapping; created: boolean }> {
  const { row, created } = await upsertSavedMapping({ userId, name: body.name, mapping: body.mapping });
  return { mapping: toWire(row), created };
}

export async function listSavedMappings(userId: string): Promise<SavedMapping[]> {
  return (await listSavedMappingRows(userId)).map(toWire);
}

/** The caller's saved mapping, or a 404 (also for another user's id). */
export async function savedMappingFor(id: number, userId: string): Promise<AnyImportMapping> {
  const row = await getSavedMappingRow(id, userId);
  if (!row) throw notFound("Saved mapping", id);
  return toWire(row).mapping;
}

export async function deleteSavedMapping(id: number, userId: string): Promise<void> {
  if (!await deleteSavedMappingRow(id, userId)) throw notFound("Saved mapping", id);
}
