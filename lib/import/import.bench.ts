/**
 * Benchmark: importing 10,000 conversations (8 messages each, tool steps on assistant turns) from one
 * JSON file, stage by stage, into a fresh SQLite file. Run with `npm run bench`; figures go to
 * bench-results.json under `import_10k_conversations`. No thresholds: the numbers are for reading.
 */
import { closeDb, getDb } from "@/db/client";
import { insertConversationsBulk } from "@/db/repositories/imports";
import { decodeUpload } from "./decode";
import { normaliseUpload } from "./formats";
import { parseUpload } from "./parse";
import { validateConversations } from "./validate";

const CONVERSATIONS = 10_000;
const MESSAGES_PER_CONVERSATION = 8;

function makeFile(): Uint8Array {
  const agents = [
    {
      name: "support",
      tools: {
        lookup_order: { name: "lookup_order", parameters: { order_id: "string" } },
        refund: { name: "refund", parameters: { order_id: "string", amount: "number" } },
      },
    },
  ];
  const conversations = Array.from({ length: CONVERSATIONS }, (_, c) => ({
    name: `Conversation ${c}`,
    meta: { channel: c % 2 ? "web" : "email", customer: { tier: c % 3 ? "gold" : "basic", id: c } },
    agents,
    messages: Array.from({ length: MESSAGES_PER_CONVERSATION }, (_, m) =>
      m % 2 === 0
        ? { role: "user", content: `Where is my order ${c}-${m}? It was supposed to arrive yesterday and it has not.` }
        : {
            role: "assistant",
            content: `Order ${c}-${m} left the warehouse this morning and should reach you tomorrow before noon.`,
            meta: { latency_ms: 800 + m, input_tokens: 420, output_tokens: 38 },
            // Every other assistant turn uses a tool: three steps.
            steps:
              m % 4 === 1
                ? [
                    { thinking: "The user asks about an order; look it up.", model_name: "gpt-4o-mini", agent_name: "support" },
                    { tool_call: { name: "lookup_order", arguments: { order_id: `${c}-${m}` } }, agent_name: "support" },
                    { tool_result: { status: "shipped", eta: "tomorrow" }, agent_name: "support" },
                  ]
                : [],
          },
    ),
  }));
  return new TextEncoder().encode(JSON.stringify({ conversations }));
}

function time<T>(fn: () => T): [T, number] {
  const start = performance.now();
  const value = fn();
  return [value, performance.now() - start];
}

function main() {
  getDb(); // migrate before timing
  const [bytes, generateMs] = time(makeFile);
  const [decoded, decodeMs] = time(() => decodeUpload(bytes, { maxBytes: 512 * 1024 * 1024 }));
  if (!decoded.ok) throw new Error("decode failed");
  const [parsed, parseMs] = time(() => parseUpload(decoded.text));
  if (!parsed.ok) throw new Error("parse failed");
  const [validated, validateMs] = time(() => {
    const normalised = normaliseUpload(parsed);
    return validateConversations(normalised.data);
  });
  if (!validated.ok) throw new Error(`validation failed: ${JSON.stringify(validated.errors.slice(0, 3))}`);
  const [inserted, insertMs] = time(() =>
    insertConversationsBulk({ create: { name: "bench", description: null, userId: "bench" } }, validated.conversations),
  );
  if (!inserted.ok) throw new Error("insert failed");
  const stored = getDb().$client.prepare("select count(*) as n from steps where dataset_id = ?").get(inserted.datasetId) as { n: number };
  if (stored.n !== inserted.steps) throw new Error("row counts differ");
  closeDb();

  const totalMs = decodeMs + parseMs + validateMs + insertMs;
  const round = (n: number) => Math.round(n * 10) / 10;
  const figures = {
    import_10k_conversations: {
      conversations: inserted.conversations,
      messages: inserted.messages,
      steps: inserted.steps,
      file_mb: round(bytes.length / 1024 / 1024),
      generate_ms: Math.round(generateMs),
      decode_ms: Math.round(decodeMs),
      parse_ms: Math.round(parseMs),
      validate_ms: Math.round(validateMs),
      insert_ms: Math.round(insertMs),
      total_ms: Math.round(totalMs),
      conversations_per_s: Math.round(inserted.conversations / (totalMs / 1000)),
      rows_per_s: Math.round((inserted.conversations + inserted.messages + inserted.steps) / (insertMs / 1000)),
      peak_rss_mb: round(process.resourceUsage().maxRSS / 1024),
      node: process.version,
      measured_at: new Date().toISOString(),
    },
  };
  console.log(`BENCH_RESULT ${JSON.stringify(figures)}`);
}

main();
