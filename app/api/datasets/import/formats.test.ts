/**
 * Each format's sample (e2e/fixtures/formats, written from the format's public documentation) imported
 * through the create-and-import route, then read back through the conversations API: every message's
 * text, role, steps and meta, and each conversation's meta and agents.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "./route";
import * as conversationsRoute from "../[id]/conversations/route";
import * as conversationRoute from "../../conversations/[id]/route";

const sample = (name: string) => fs.readFileSync(path.join(process.cwd(), "e2e/fixtures/formats", name), "utf8");

type Step = { thinking: unknown; tool_call: unknown; tool_result: unknown; output_content: unknown };
type Message = { role: string; content: string | null; meta: unknown; steps: Step[] };
type Conversation = { meta: unknown; agents: unknown; messages: Message[] };

/** A step as the one field it holds: `{thinking: …}`, `{tool_call: …}`, … */
const stepOf = (s: Step) => Object.fromEntries(Object.entries(s).filter(([k, v]) => ["thinking", "tool_call", "tool_result", "output_content"].includes(k) && v !== null));
const messageOf = (m: Message) => ({ role: m.role, content: m.content, meta: m.meta, steps: m.steps.map(stepOf) });

async function importSample(name: string, text = sample(name)) {
  const res = await upload(createAndImport.POST, "/api/datasets/import", { file: text, filename: name, fields: { name } });
  if (res.status !== 201) throw new Error(`${name}: ${res.status} ${res.text}`);
  const id = res.json.dataset_id as number;
  const list = await call(conversationsRoute.GET, "GET", `/api/datasets/${id}/conversations`, { params: { id } });
  const conversations: Conversation[] = [];
  for (const c of list.json as Array<{ id: number }>) {
    conversations.push((await call(conversationRoute.GET, "GET", `/api/conversations/${c.id}`, { params: { id: c.id } })).json);
  }
  return { outcome: res.json, conversations, messages: conversations.map((c) => c.messages.map(messageOf)) };
}

const text = (role: string, content: string, meta: unknown = null) => ({ role, content, meta, steps: [] });

describe("formats: each sample imports as it is, through the API", () => {
  it("OpenAI request body: parts, image placeholder, tool_calls, tool replies, refusal, developer role, tools → agent", async () => {
    const { outcome, conversations, messages } = await importSample("openai-request.json");
    expect(outcome).toMatchObject({ format: "openai_chat", conversations_imported: 1, messages_imported: 5, steps_imported: 3 });
    // The image's URL is not stored (a placeholder is): said, not hidden.
    expect(outcome.not_imported).toEqual([{ path: "messages[].content[].image_url.url", characters: 39 }]);
    expect(messages[0]).toEqual([
      text("system", "You are a helpful assistant."),
      text("user", "What's the weather like in Boston today?\n[image]"),
      {
        role: "assistant",
        content: "It is sunny in Boston today, 22 °C.",
        meta: null,
        steps: [
          { tool_call: { name: "get_current_weather", arguments: { location: "Boston, MA" }, id: "call_abc123" } },
          { tool_result: { temperature: 22, unit: "celsius", description: "Sunny" } },
          { output_content: "It is sunny in Boston today, 22 °C." },
        ],
      },
      text("user", "Tell me how to pick a lock."),
      text("assistant", "I'm sorry, I can't help with that."),
    ]);
    expect(conversations[0].meta).toEqual({ model: "gpt-4o" });
    expect(conversations[0].agents).toEqual([
      { name: "assistant", tools: { get_current_weather: expect.objectContaining({ name: "get_current_weather", description: "Get the current weather in a given location" }) } },
    ]);
  });

  it("OpenAI fine-tuning JSON Lines with the legacy function_call and role: function", async () => {
    const { outcome, conversations, messages } = await importSample("openai-legacy-functions.jsonl");
    expect(outcome).toMatchObject({ format: "jsonl", conversations_imported: 2, messages_imported: 5, not_imported: [] });
    expect(messages[0]).toEqual([
      text("system", "You are a helpful assistant."),
      text("user", "What is the weather in San Francisco?"),
      {
        role: "assistant",
        content: "It is 21 degrees celsius in San Francisco, CA",
        meta: null,
        steps: [
          { tool_call: { name: "get_current_weather", arguments: { location: "San Francisco, USA", format: "celsius" } } },
          { tool_result: "21.0" },
          { output_content: "It is 21 degrees celsius in San Francisco, CA" },
        ],
      },
    ]);
    expect((conversations[0].agents as Array<{ tools: object }>)[0].tools).toHaveProperty("get_current_weather");
    // A field the format has and Turnscope does not (`weight`) is not text: nothing listed, nothing lost.
    expect(messages[1]).toEqual([text("user", "Hi"), text("assistant", "Hello! How can I help?")]);
  });

  it("ShareGPT / LLaMA-Factory: from/value, function_call and observation turns, system, tools as JSON text, other fields → meta", async () => {
    const { outcome, conversations, messages } = await importSample("sharegpt.json");
    expect(outcome).toMatchObject({ format: "sharegpt", conversations_imported: 2, messages_imported: 5, steps_imported: 3, not_imported: [] });
    expect(messages).toEqual([
      [
        text("system", "You can call tools."),
        text("user", "What is the weather in Paris?"),
        {
          role: "assistant",
          content: "It is 18 degrees and cloudy in Paris.",
          meta: null,
          steps: [
            { tool_call: { name: "get_weather", arguments: { city: "Paris" } } },
            { tool_result: { temperature: 18, condition: "cloudy" } },
            { output_content: "It is 18 degrees and cloudy in Paris." },
          ],
        },
      ],
      [text("user", "Say hi in French."), text("assistant", "Bonjour !")],
    ]);
    expect(conversations[0].agents).toEqual([
      { name: "assistant", tools: { get_weather: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } } },
    ]);
    expect(conversations[1].meta).toEqual({ id: "identity_1", source: "alpaca" });
  });

  it("Anthropic Messages: system blocks, thinking, text, tool_use, tool_result in a user message", async () => {
    const { outcome, conversations, messages } = await importSample("anthropic-messages.json");
    expect(outcome).toMatchObject({ format: "anthropic_messages", conversations_imported: 1, messages_imported: 3, steps_imported: 5, not_imported: [] });
    expect(messages[0]).toEqual([
      text("system", "You are a weather assistant."),
      text("user", "What's the weather like in San Francisco?"),
      {
        role: "assistant",
        content: "It is currently 15 degrees and foggy in San Francisco.",
        meta: null,
        steps: [
          { thinking: "The user wants the weather; I should call get_weather." },
          { output_content: "I'll check the current weather in San Francisco for you." },
          { tool_call: { name: "get_weather", arguments: { location: "San Francisco, CA" }, id: "toolu_01A09q90qw90lq917835lq9" } },
          { tool_result: "15 degrees, foggy" },
          { output_content: "It is currently 15 degrees and foggy in San Francisco." },
        ],
      },
    ]);
    expect(conversations[0].meta).toEqual({ model: "claude-sonnet-4-20250514", max_tokens: 1024 });
    expect(conversations[0].agents).toEqual([
      { name: "assistant", tools: { get_weather: expect.objectContaining({ parameters: expect.objectContaining({ required: ["location"] }) }) } },
    ]);
  });

  it("content parts under other names: text in `value`/`content`, reasoning/thinking, tool_call, tool_result", async () => {
    const { outcome, conversations, messages } = await importSample("content-parts.jsonl");
    expect(outcome).toMatchObject({ format: "content_parts", conversations_imported: 2, messages_imported: 4, not_imported: [] });
    expect(messages).toEqual([
      [
        text("user", "How many r's are in strawberry?"),
        {
          role: "assistant",
          content: "There are 3 r's in strawberry.",
          meta: null,
          steps: [{ thinking: "s-t-r-a-w-b-e-r-r-y has r at positions 3, 8 and 9." }, { output_content: "There are 3 r's in strawberry." }],
        },
      ],
      [
        text("user", "Convert 100 USD to EUR."),
        {
          role: "assistant",
          content: "100 USD is about 92.3 EUR.",
          meta: null,
          steps: [
            { thinking: "I need the exchange rate." },
            { tool_call: { name: "convert_currency", arguments: { amount: 100, from: "USD", to: "EUR" } } },
            { tool_result: "92.3 EUR" },
            { output_content: "100 USD is about 92.3 EUR." },
          ],
        },
      ],
    ]);
    expect(conversations.map((c) => c.meta)).toEqual([{ id: "ex-1", label: "good" }, { id: "ex-2", label: "tool" }]);
  });

  it("trajectory records: the conversation under `traj`, reward/task_id/trial/info → meta", async () => {
    const { outcome, conversations, messages } = await importSample("trajectories.json");
    // The rewards are written 1.0 and 0.0 and stored as 1 and 0: said, as their bytes are not kept.
    expect(outcome).toMatchObject({
      conversations_imported: 2,
      messages_imported: 5,
      steps_imported: 3,
      not_imported: [{ path: "[].reward", characters: 6, reason: "re-serialised: 2 values here, e.g. 1.0 stored as 1" }],
    });
    expect(conversations.map((c) => c.meta)).toEqual([
      { task_id: 7, trial: 0, reward: 1, info: { user_id: "mia_li_3668" } },
      { task_id: 8, trial: 0, reward: 0, info: { user_id: "omar_davis_3817" } },
    ]);
    expect(messages[0][2]).toEqual({
      role: "assistant",
      content: "Your reservation ABC123 is active. Shall I cancel it?",
      meta: null,
      steps: [
        { tool_call: { name: "get_reservation_details", arguments: { reservation_id: "ABC123" }, id: "call_1" } },
        { tool_result: { reservation_id: "ABC123", status: "active" } },
        { output_content: "Your reservation ABC123 is active. Shall I cancel it?" },
      ],
    });
    expect(messages[1]).toEqual([text("user", "Change my flight to tomorrow."), text("assistant", "Which reservation would you like to change?")]);
  });

  it("CSV, one row per message: grouped by conversation_id, quoted newlines kept, other columns → meta", async () => {
    const { outcome, conversations, messages } = await importSample("messages.csv");
    expect(outcome).toMatchObject({ format: "csv", conversations_imported: 2, messages_imported: 4, not_imported: [] });
    expect(messages).toEqual([
      [text("user", "Where is my order #1042?"), text("assistant", "It shipped yesterday and arrives Friday.", { turn_note: "polite" })],
      [text("user", "Cancel my plan, please"), text("assistant", "I have cancelled it. Anything else?\nHave a good day.")],
    ]);
    expect(conversations.map((c) => c.meta)).toEqual([{ label: "resolved" }, { label: "escalated" }]);
  });

  it("an assistant turn of several model calls keeps every call's meta, and its tool replies', in order with the step each starts at", async () => {
    const toolCall = (id: string, name: string, args: unknown) => ({ id, type: "function", function: { name, arguments: JSON.stringify(args) } });
    const record = {
      messages: [
        { role: "user", content: "Refund order 7?" },
        { role: "assistant", content: null, tool_calls: [toolCall("c1", "find_order", { id: 7 })], meta: { model: "m-1", usage: { input_tokens: 120, output_tokens: 9 } } },
        { role: "tool", tool_call_id: "c1", name: "find_order", content: "order 7: paid", meta: { latency_ms: 40 } },
        { role: "assistant", content: null, tool_calls: [toolCall("c2", "refund", { id: 7 })], meta: { model: "m-1", usage: { input_tokens: 150, output_tokens: 8 } } },
        { role: "tool", tool_call_id: "c2", name: "refund", content: "refunded" },
        { role: "assistant", content: "Done: order 7 is refunded.", meta: { model: "m-2", usage: { input_tokens: 170, output_tokens: 7 } } },
        { role: "user", content: "Thanks" },
        { role: "assistant", content: "You're welcome.", meta: { model: "m-2" } },
      ],
    };
    const { messages } = await importSample("turn-meta.jsonl", JSON.stringify(record));
    const [, turn, , single] = messages[0] as Array<{ meta: unknown; steps: unknown[] }>;
    expect(turn.steps).toHaveLength(5);
    // The first call's meta stays where it was; every call's (and the tool reply's that had any) is listed.
    expect(turn.meta).toEqual({
      model: "m-1",
      usage: { input_tokens: 120, output_tokens: 9 },
      turn_messages: [
        { role: "assistant", first_step: 0, meta: { model: "m-1", usage: { input_tokens: 120, output_tokens: 9 } } },
        { role: "tool", first_step: 1, meta: { latency_ms: 40 } },
        { role: "assistant", first_step: 2, meta: { model: "m-1", usage: { input_tokens: 150, output_tokens: 8 } } },
        { role: "assistant", first_step: 4, meta: { model: "m-2", usage: { input_tokens: 170, output_tokens: 7 } } },
      ],
    });
    // A turn of one message: its meta as it was.
    expect(single.meta).toEqual({ model: "m-2" });
  });
});

describe("nothing silently lost", () => {
  it("refuses a file whose message text sits in fields no adapter reads, with the path, and writes nothing", async () => {
    // The case: every message would be stored empty. Here the parts hold their text under `body`.
    const lines = Array.from({ length: 3 }, (_, i) =>
      JSON.stringify({ messages: [{ role: "user", content: [{ type: "text", body: `question ${i}` }] }, { role: "assistant", content: [{ type: "text", body: `answer ${i}` }] }] }),
    );
    const res = await upload(createAndImport.POST, "/api/datasets/import", { file: lines.join("\n"), fields: { name: "lost", get_feedback: "false" } });
    expect(res.status).toBe(422);
    expect(res.json.success).toBe(false);
    expect(res.json.not_imported).toEqual([{ path: "messages[].content[].body", characters: 3 * ("question 0".length + "answer 0".length) }]);
    // One fault per message position, repeated on every line: one group each.
    expect(res.json.errors).toHaveLength(2);
    expect(res.json.errors[0]).toMatchObject({ path: "messages[0].content[0].body (lines 1..3)", count: 3 });
    expect(res.json.errors[0].message).toMatch(/^3 lines: This message would be stored empty, but the file has 10 characters of text in it \('content\[\]\.body'\)/);
    expect(res.json.errors[1]).toMatchObject({ path: "messages[1].content[0].body (lines 1..3)", count: 3 });
  });

  it("imports a file where some text is not placed, and lists it in not_imported", async () => {
    const file = JSON.stringify({
      messages: [
        { role: "user", content: "hi", tool_calls: [] },
        { role: "assistant", content: [{ type: "text", text: "hello" }], annotation: "rated helpful by reviewer" },
      ],
    });
    const { outcome, messages } = await importSample("partial.json", file);
    expect(messages[0]).toEqual([text("user", "hi"), text("assistant", "hello")]);
    expect(outcome.not_imported).toEqual([{ path: "messages[].annotation", characters: "rated helpful by reviewer".length }]);
  });
});

describe("agent logs without a real file: samples written from the formats' documentation", () => {
  it("OpenHands event stream: one conversation, actions as thinking + tool call steps, observations as results, outcome in meta", async () => {
    const { outcome, conversations } = await importSample("openhands-events.json");
    expect(outcome).toMatchObject({ format: "agent_events", conversations_imported: 1, messages_imported: 3 });
    expect(outcome.records).toMatchObject({ in_file: 9, skipped: { agent_state_changed: 2 } });
    const [run] = conversations;
    expect(run.meta).toMatchObject({ outcome: { agent_state: "finished", finish: { task_completed: "true" } } });
    const steps = run.messages[2].steps.map(stepOf);
    expect(steps.slice(0, 3)).toEqual([
      { thinking: "Let me run the test first to see the failure." },
      { tool_call: expect.objectContaining({ name: "execute_bash", id: "toolu_01A", arguments: expect.objectContaining({ command: "python -m pytest tests/test_math.py -q" }) }) },
      { tool_result: "F\nE   assert add(2, 2) == 5\n1 failed in 0.02s" },
    ]);
  });

  it("Inspect AI eval log: a conversation per sample, function-name tool calls as steps, input/target/scores in meta", async () => {
    const { outcome, conversations, messages } = await importSample("inspect-eval-log.json");
    expect(outcome).toMatchObject({ format: "eval_log", conversations_imported: 2, messages_imported: 5, steps_imported: 4, not_imported: [] });
    expect(messages[0][2].steps[0]).toEqual({ tool_call: { name: "add", arguments: { x: 1, y: 1 }, id: "call_1" } });
    expect(conversations[1].meta).toMatchObject({ input: "What is 3 * 4?", target: "12", scores: { match: { value: "I", answer: "7" } }, eval: { task: "arithmetic_tools", model: "openai/gpt-4o" } });
  });
});

describe("agent log families read from their published shape (issue 36), through the API", () => {
  const steps = (cs: Conversation[]) => cs.flatMap((c) => c.messages.flatMap((m) => m.steps));
  const calls = (cs: Conversation[]) => steps(cs).filter((s) => s.tool_call !== null);
  const results = (cs: Conversation[]) => steps(cs).filter((s) => s.tool_result !== null);

  it.each([
    // [sample, format, conversations, calls, results, a field of the first conversation's meta]
    ["openhands-output.jsonl", "agent_events", 2, 5, 4, { instance_id: "example__parser-1" }],
    ["codex-rollout.jsonl", "codex_rollout", 1, 2, 2, { cli_version: "0.46.0" }],
    ["tau2-results.json", "tau2_results", 2, 5, 5, { reward: 1 }],
    ["smolagents-run.jsonl", "smolagents_run", 2, 4, 4, { true_answer: "12" }],
    ["swe-agent-legacy.traj", "swe_agent_trajectory", 1, 3, 3, { info: { exit_status: "submitted" } }],
  ] as const)("%s imports as %s: every call stored with its result, the outcome in meta", async (name, format, conversationCount, callCount, resultCount, meta) => {
    const { outcome, conversations } = await importSample(name);
    expect(outcome).toMatchObject({ format, conversations_imported: conversationCount });
    expect(calls(conversations)).toHaveLength(callCount);
    expect(results(conversations)).toHaveLength(resultCount);
    expect(conversations[0].meta).toMatchObject(meta);
  });
});
