/** Benchmarks' shared set-up: a SQLite dataset written straight in, and an in-process judge model. */
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { getDb } from "@/db/sqlite-database";
import { createNode } from "@/db/repositories/metrics";
import { createDataset } from "@/lib/datasets";

/** A dataset of `conversations` × 10 assistant turns, with one message-level metric. */
export async function seedBenchDataset(conversations: number): Promise<{ datasetId: number; nodeId: number }> {
  const dataset = await createDataset({ name: `runner bench ${conversations}`, userId: "bench" });
  const sqlite = getDb().$client;
  const conv = sqlite.prepare("insert into conversations (dataset_id, position, name) values (?, ?, ?)");
  const msg = sqlite.prepare("insert into messages (conversation_id, dataset_id, position, role, content) values (?, ?, ?, ?, ?)");
  sqlite.transaction(() => {
    for (let i = 0; i < conversations; i++) {
      const c = Number(conv.run(dataset.id, i, `c${i}`).lastInsertRowid);
      for (let t = 0; t < 10; t++) {
        msg.run(c, dataset.id, 2 * t, "user", `Question ${t} about order ${i}-${conversations}?`);
        msg.run(c, dataset.id, 2 * t + 1, "assistant", `Answer ${t}: order ${i}-${conversations} ships tomorrow.`);
      }
    }
  })();
  const node = await createNode(dataset.id, {
    name: "helpful",
    evaluationLevel: "message",
    prompt: "Rate @CURRENT_MESSAGE.output given @CURRENT_MESSAGE.input",
    outputType: "progress",
    templateVariables: ["@CURRENT_MESSAGE.output", "@CURRENT_MESSAGE.input"],
    isAdvanced: true,
  });
  return { datasetId: dataset.id, nodeId: node.id };
}

/** An AI SDK model answering in-process after `delayMs` (0: at once). */
export function localModel(delayMs: number): LanguageModelV3 {
  const text = JSON.stringify({ score: 0.8, reasoning: "fine" });
  const answer = (): LanguageModelV3GenerateResult => ({
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: {
      inputTokens: { total: 120, noCache: 120, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 12, text: 12, reasoning: 0 },
    },
    warnings: [],
  });
  return {
    specificationVersion: "v3",
    provider: "bench",
    modelId: `bench-${delayMs}`,
    supportedUrls: {},
    doGenerate: (options: LanguageModelV3CallOptions) =>
      delayMs === 0
        ? Promise.resolve(answer())
        : new Promise((resolve, reject) => {
            const timer = setTimeout(() => resolve(answer()), delayMs);
            options.abortSignal?.addEventListener("abort", () => {
              clearTimeout(timer);
              reject(options.abortSignal?.reason);
            });
          }),
    doStream: () => Promise.reject(new Error("not used")),
  };
}
