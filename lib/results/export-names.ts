import "server-only";
import { listConversationInfo } from "@/db/repositories/grid";
import type { EvaluationResultRow } from "@/db/schema";
import { exportConversationName } from "./export-rows";

/** The names of a page's conversations (one query a page), as the grid export writes them (issue 51: the run CSV had ids only). */
export async function conversationNamesOf(page: EvaluationResultRow[]): Promise<Map<number, string | null>> {
  const info = await listConversationInfo([...new Set(page.map((r) => r.conversationId))]);
  return new Map(info.map((c) => [c.id, exportConversationName(c)]));
}
