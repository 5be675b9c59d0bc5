/** A sample of a dataset's conversation and message `meta` objects, for listing the fields they hold. */
import "server-only";
import { and, asc, eq, isNotNull } from "drizzle-orm";
import { database } from "../store";
import { conversationsTable, messagesTable } from "../tables";

/** The first `limit` conversations' meta (in dataset order), and the first `limit` messages' meta that have one. */
export async function sampleMetaObjects(datasetId: number, limit: number): Promise<{ conversation: unknown[]; message: unknown[] }> {
  const db = await database();
  const c = conversationsTable;
  const m = messagesTable;
  const conversation = await db
    .select({ meta: c.meta })
    .from(c)
    .where(and(eq(c.datasetId, datasetId), isNotNull(c.meta)))
    .orderBy(asc(c.position))
    .limit(limit);
  const message = await db
    .select({ meta: m.meta })
    .from(m)
    .where(and(eq(m.datasetId, datasetId), isNotNull(m.meta)))
    .orderBy(asc(m.id))
    .limit(limit);
  return { conversation: conversation.map((r) => r.meta), message: message.map((r) => r.meta) };
}
