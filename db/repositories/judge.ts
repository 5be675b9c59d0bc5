/** The judge's tables: the verdict cache, and the goal stored on a conversation. */
import "server-only";
import { eq } from "drizzle-orm";
import { changes, database, first, rawExec, rawRows, rawRun, type Step } from "../store";
import { conversationsTable, judgeCacheTable } from "../tables";

export type CachedVerdict = { response: unknown; inputTokens: number; outputTokens: number };

/** A cached verdict. Read once per cell, so it is a prepared statement and counts nothing. */
export async function readJudgeCache(key: string): Promise<CachedVerdict | undefined> {
  const row = first(
    await rawRows<{ response: string; input_tokens: number; output_tokens: number }>(
      "select response, input_tokens, output_tokens from judge_cache where key = ?",
      [key],
    ),
  );
  return row && { response: JSON.parse(row.response) as unknown, inputTokens: row.input_tokens, outputTokens: row.output_tokens };
}

/** A fresh verdict to store under its key. */
export type JudgeCacheEntry = { key: string; model: string } & CachedVerdict;

const writeCacheSql = `insert into judge_cache (key, model, response, input_tokens, output_tokens) values (?, ?, ?, ?, ?)
  on conflict (key) do update set response = excluded.response, input_tokens = excluded.input_tokens,
    output_tokens = excluded.output_tokens, last_used_at = ?`;
const writeCacheParams = (entry: JudgeCacheEntry) => [
  entry.key,
  entry.model,
  JSON.stringify(entry.response),
  entry.inputTokens,
  entry.outputTokens,
  new Date().toISOString(),
];

export async function writeJudgeCache(entry: JudgeCacheEntry): Promise<void> {
  await rawRun(writeCacheSql, writeCacheParams(entry));
}

/** Inside `transaction`: store a verdict with the cell result it decided (lib/runner saves both at once). */
export function* writeJudgeCacheStep(entry: JudgeCacheEntry): Generator<Step, void, unknown> {
  yield* rawExec(writeCacheSql, writeCacheParams(entry));
}

export async function clearJudgeCache(): Promise<number> {
  return changes(await (await database()).delete(judgeCacheTable));
}

export async function getStoredGoal(conversationId: number): Promise<{ goal: string | null; generatedBy: string | null } | undefined> {
  const db = await database();
  return first(
    await db
      .select({ goal: conversationsTable.goal, generatedBy: conversationsTable.goalGeneratedBy })
      .from(conversationsTable)
      .where(eq(conversationsTable.id, conversationId)),
  );
}

export async function storeGoal(conversationId: number, goal: string, generatedBy: string): Promise<void> {
  const db = await database();
  await db.update(conversationsTable).set({ goal, goalGeneratedBy: generatedBy }).where(eq(conversationsTable.id, conversationId));
}
