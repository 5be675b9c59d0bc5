/** The judge's tables: the verdict cache, and the goal stored on a conversation. */
import "server-only";
import { eq } from "drizzle-orm";
import { getDb, statement } from "../client";
import { conversationsTable, judgeCacheTable } from "../schema";

export type CachedVerdict = { response: unknown; inputTokens: number; outputTokens: number };

/** A cached verdict. Read once per cell, so it is a prepared statement and counts nothing. */
export async function readJudgeCache(key: string): Promise<CachedVerdict | undefined> {
  const row = statement("select response, input_tokens, output_tokens from judge_cache where key = ?").get(key) as
    | { response: string; input_tokens: number; output_tokens: number }
    | undefined;
  return row && { response: JSON.parse(row.response) as unknown, inputTokens: row.input_tokens, outputTokens: row.output_tokens };
}

export async function writeJudgeCache(entry: { key: string; model: string } & CachedVerdict): Promise<void> {
  statement(
    `insert into judge_cache (key, model, response, input_tokens, output_tokens) values (?, ?, ?, ?, ?)
     on conflict (key) do update set response = excluded.response, input_tokens = excluded.input_tokens,
       output_tokens = excluded.output_tokens, last_used_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
  ).run(entry.key, entry.model, JSON.stringify(entry.response), entry.inputTokens, entry.outputTokens);
}

export async function clearJudgeCache(): Promise<number> {
  return getDb().delete(judgeCacheTable).run().changes;
}

export async function getStoredGoal(conversationId: number): Promise<{ goal: string | null; generatedBy: string | null } | undefined> {
  return getDb()
    .select({ goal: conversationsTable.goal, generatedBy: conversationsTable.goalGeneratedBy })
    .from(conversationsTable)
    .where(eq(conversationsTable.id, conversationId))
    .get();
}

export async function storeGoal(conversationId: number, goal: string, generatedBy: string): Promise<void> {
  getDb()
    .update(conversationsTable)
    .set({ goal, goalGeneratedBy: generatedBy })
    .where(eq(conversationsTable.id, conversationId))
    .run();
}
