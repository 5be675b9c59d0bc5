/**
 * Test-only: insert e2e/fixtures/sample-dataset.json into the test database with drizzle, without the
 * import pipeline, and return the ids of everything inserted in fixture order.
 */
import fs from "node:fs";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import type { MessageRole } from "@/lib/vocabulary";
import { database, first, rows, transaction } from "@/db/store";
import { conversationsTable, datasetsTable, evaluationResultsTable, messagesTable, pipelineExecutionsTable, stepsTable } from "@/db/tables";

type FixtureStep = {
  thinking?: string;
  tool_call?: unknown;
  tool_result?: unknown;
  output_content?: string;
  output_structured?: unknown;
  model_name?: string;
  agent_name?: string;
};
type FixtureMessage = { role: MessageRole; content?: string; meta?: unknown; steps?: FixtureStep[] };
type FixtureConversation = { name?: string; description?: string; meta?: unknown; agents?: unknown; messages: FixtureMessage[] };

export const sampleFixturePath = path.join(process.cwd(), "e2e", "fixtures", "sample-dataset.json");

export function readSampleFixture(): { conversations: FixtureConversation[] } {
  return JSON.parse(fs.readFileSync(sampleFixturePath, "utf8")) as { conversations: FixtureConversation[] };
}

export type LoadedSample = {
  datasetId: number;
  conversations: Array<{ id: number; name: string | null; messages: Array<{ id: number; role: MessageRole; steps: number[] }> }>;
};

/** A new dataset holding the sample fixture's five conversations; `goals` sets conversations.goal by index. */
export async function loadSampleDataset(opts: { name?: string; goals?: Record<number, string> } = {}): Promise<LoadedSample> {
  const fixture = readSampleFixture();
  return transaction(function* (tx) {
    const [dataset] = yield* rows(tx.insert(datasetsTable).values({ name: opts.name ?? "sample", userId: "default" }).returning());
    const conversations: LoadedSample["conversations"] = [];
    for (const [ci, c] of fixture.conversations.entries()) {
      const [conv] = yield* rows(tx
        .insert(conversationsTable)
        .values({
          datasetId: dataset.id,
          position: ci,
          name: c.name ?? null,
          description: c.description ?? null,
          meta: c.meta ?? null,
          agents: c.agents ?? null,
          goal: opts.goals?.[ci] ?? null,
          goalGeneratedBy: opts.goals?.[ci] ? "test" : null,
        })
        .returning());
      const messages: LoadedSample["conversations"][number]["messages"] = [];
      for (const [mi, m] of c.messages.entries()) {
        const [msg] = yield* rows(
          tx
            .insert(messagesTable)
            .values({ conversationId: conv.id, datasetId: dataset.id, position: mi, role: m.role, content: m.content ?? null, meta: m.meta ?? null })
            .returning(),
        );
        const steps: number[] = [];
        for (const [si, s] of (m.steps ?? []).entries()) {
          const [step] = yield* rows(
            tx
              .insert(stepsTable)
              .values({
                messageId: msg.id,
                conversationId: conv.id,
                datasetId: dataset.id,
                position: si,
                thinking: s.thinking ?? null,
                toolCall: s.tool_call ?? null,
                toolResult: s.tool_result ?? null,
                outputContent: s.output_content ?? null,
                outputStructured: s.output_structured ?? null,
                modelName: s.model_name ?? null,
                agentName: s.agent_name ?? null,
              })
              .returning({ id: stepsTable.id }),
          );
          steps.push(step.id);
        }
        messages.push({ id: msg.id, role: m.role, steps });
      }
      conversations.push({ id: conv.id, name: conv.name, messages });
    }
    return { datasetId: dataset.id, conversations };
  });
}

/** One finished execution with one completed result for a metric at a message (to prove cascades). */
export async function insertMessageResult(opts: { datasetId: number; pipelineNodeId: number; conversationId: number; messageId: number }): Promise<number> {
  const db = await database();
  const [execution] = await db
    .insert(pipelineExecutionsTable)
    .values({ datasetId: opts.datasetId, pipelineNodeId: opts.pipelineNodeId, status: "completed" })
    .returning();
  const [result] = await db
    .insert(evaluationResultsTable)
    .values({
      executionId: execution.id,
      pipelineNodeId: opts.pipelineNodeId,
      datasetId: opts.datasetId,
      entityType: "message",
      entityId: opts.messageId,
      conversationId: opts.conversationId,
      messageId: opts.messageId,
      result: { score: 0.5, reasoning: "test" },
      score: 0.5,
      status: "completed",
    })
    .returning();
  return result.id;
}

export async function countResults(pipelineNodeId: number): Promise<number> {
  const db = await database();
  return first(await db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(evaluationResultsTable).where(eq(evaluationResultsTable.pipelineNodeId, pipelineNodeId)))?.n ?? 0;
}

/** Executions of a dataset with the metric they ran (null once the metric is deleted). */
export async function executionNodeIds(datasetId: number): Promise<Array<number | null>> {
  const db = await database();
  return (await db.select({ nodeId: pipelineExecutionsTable.pipelineNodeId }).from(pipelineExecutionsTable).where(eq(pipelineExecutionsTable.datasetId, datasetId))).map((r) => r.nodeId);
}
