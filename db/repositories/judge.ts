/** The judge's tables: the verdict cache, and the goal stored on a conversation. */
import "server-only";
import { eq, sql } from "drizzle-orm";
import { getDb } from "../client";
import { conversationsTable, judgeCacheTable } from "../schema";

export type CachedVerdict = { response: unknown; inputTokens: number; outputTokens: number };

/** A cached verdict, counting the hit. */
export function readJudgeCache(key: string): CachedVerdict | undefined {
  const db = getDb();
  const row = db
    .select({ response: judgeCacheTable.response, inputTokens: judgeCacheTable.inputTokens, outputTokens: judgeCacheTable.outputTokens })
    .from(judgeCacheTable)
    .where(eq(judgeCacheTable.key, key))
    .get();
  if (row) {
    db.update(judgeCacheTable)
      .set({ hits: sql`${judgeCacheTable.hits} + 1`, lastUsedAt: new Date().toISOString() })
      .where(eq(judgeCacheTable.key, key))
      .run();
  }
  return row;
}

export function writeJudgeCache(entry: { key: string; model: string } & CachedVerdict): void {
  getDb()
    .insert(judgeCacheTable)
    .values(entry)
    .onConflictDoUpdate({
      target: judgeCacheTable.key,
      set: { response: entry.response, inputTokens: entry.inputTokens, outputTokens: entry.outputTokens },
    })
    .run();
}

export function clearJudgeCache(): number {
  return getDb().delete(judgeCacheTable).run().changes;
}

export function getStoredGoal(conversationId: number): { goal: string | null; generatedBy: string | null } | undefined {
  return getDb()
    .select({ goal: conversationsTable.goal, generatedBy: conversationsTable.goalGeneratedBy })
    .from(conversationsTable)
    .where(eq(conversationsTable.id, conversationId))
    .get();
}

export function storeGoal(conversationId: number, goal: string, generatedBy: string): void {
  getDb()
    .update(conversationsTable)
    .set({ goal, goalGeneratedBy: generatedBy })
    .where(eq(conversationsTable.id, conversationId))
    .run();
}
