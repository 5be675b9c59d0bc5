// test-stores: no-store (it converts and checks files in memory: lib/import reaches the store only to save, which these tests never do)
import { describe, expect, it } from "vitest";
import { checkUpload } from "../index";

const check = (text: string) => checkUpload(new TextEncoder().encode(text), { maxBytes: 10_000_000 });
function success(text: string) {
  const r = check(text);
  if (!r.ok) throw new Error(`expected success, got ${JSON.stringify(r.errors)}`);
  return r;
}

const chat = [
  { role: "system", content: "You book flights." },
  { role: "user", content: "Flights BOS to LIS tomorrow?" },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      { id: "call_1", type: "function", function: { name: "search_flights", arguments: '{"origin":"BOS","destination":"LIS"}' } },
      { id: "call_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Lisbon"}' } },
    ],
  },
  { role: "tool", tool_call_id: "call_1", content: '{"flights":[{"id":"TP218"}]}' },
  { role: "tool", tool_call_id: "call_2", content: "sunny" },
  { role: "assistant", content: "TP218 leaves at 18:05. Lisbon will be sunny." },
  { role: "user", content: [{ type: "text", text: "Book it" }] },
  { role: "assistant", content: "Booked." },
];

describe("OpenAI chat-completions messages", () => {
  it("turns tool_calls into tool_call steps and tool messages into tool_result steps of the same turn", () => {
    const r = success(JSON.stringify(chat));
    expect(r.format).toBe("openai_chat");
    expect(r.counts).toEqual({ conversations: 1, messages: 5, steps: 5 });
    const [system, user, assistant, user2, assistant2] = r.conversations[0].messages;
    expect([system.role, user.role, assistant.role, user2.role, assistant2.role]).toEqual(["system", "user", "assistant", "user", "assistant"]);
    expect(assistant.content).toBe("TP218 leaves at 18:05. Lisbon will be sunny.");
    expect(assistant.steps.map((s) => s.toolCall ?? s.toolResult ?? s.outputContent)).toEqual([
      { name: "search_flights", arguments: { origin: "BOS", destination: "LIS" }, id: "call_1" },
      { name: "get_weather", arguments: { city: "Lisbon" }, id: "call_2" },
      { flights: [{ id: "TP218" }] },
      "sunny",
      "TP218 leaves at 18:05. Lisbon will be sunny.",
    ]);
    expect(user2.content).toBe("Book it");
    expect(assistant2.steps).toEqual([]);
    expect(r.warnings).toEqual([]);
  });

  it("accepts a request body with tools, and checks calls against them", () => {
    const body = {
      model: "gpt-4o-mini",
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }],
      messages: [
        { role: "user", content: "Weather?" },
        { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "get_weather", arguments: '{"city": 5}' } }] },
        { role: "tool", tool_call_id: "c", content: "rain" },
        { role: "assistant", content: "Rain." },
      ],
    };
    const r = success(JSON.stringify(body));
    expect(r.format).toBe("openai_chat");
    expect(r.conversations[0].agents).toEqual([{ name: "assistant", tools: { get_weather: { name: "get_weather", parameters: body.tools[0].function.parameters } } }]);
    expect(r.warnings.map((w) => w.message)).toEqual(["Argument 'city' of 'get_weather' is integer, declared string"]);
  });

  it("accepts a list of conversations (message lists or {messages} objects)", () => {
    const r = success(JSON.stringify([chat, { messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] }]));
    expect(r.format).toBe("openai_chat");
    expect(r.counts.conversations).toBe(2);
  });

  it("passes unknown roles through so validation names them", () => {
    const r = check(JSON.stringify([{ role: "user", content: "hi" }, { role: "bot", content: "hello", tool_calls: [] }]));
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.format).toBe("openai_chat");
      // The path points into the uploaded file: a bare message list, message 1.
      expect(r.errors[0]).toMatchObject({ path: "[1].role", message: "Invalid role value: 'bot'" });
    }
  });

  it("points errors at the file's message even after merged tool turns shift the converted positions", () => {
    const withBadRole = [...chat, { role: "narrator", content: "meanwhile" }];
    const r = check(JSON.stringify({ model: "m", messages: withBadRole }));
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors).toEqual([
        { path: "messages[8].role", message: "Invalid role value: 'narrator'", suggestion: "Use one of: user, assistant, system, tool" },
      ]);
    }
    const listOfLists = check(JSON.stringify([chat, [{ role: "user", content: 5 }]]));
    expect(listOfLists.ok).toBe(false);
    if (!listOfLists.ok) expect(listOfLists.errors[0].path).toBe("[1][0].content");
  });
});

describe("JSON Lines", () => {
  it("reads one conversation per line and says so", () => {
    const lines = [
      JSON.stringify({ name: "a", messages: [{ role: "user", content: "hi" }] }),
      "",
      JSON.stringify({ name: "b", meta: { k: 1 }, messages: [{ role: "user", content: "yo" }, { role: "assistant", content: "hey" }] }),
    ];
    const r = success(lines.join("\n") + "\n");
    expect(r.format).toBe("jsonl");
    expect(r.conversations.map((c) => c.name)).toEqual(["a", "b"]);
    expect(r.conversations[1].meta).toEqual({ k: 1 });
  });

  it("converts OpenAI fine-tuning lines", () => {
    const r = success([JSON.stringify({ messages: chat }), JSON.stringify({ messages: chat.slice(0, 2) })].join("\n"));
    expect(r.format).toBe("jsonl");
    expect(r.counts).toEqual({ conversations: 2, messages: 7, steps: 5 });
  });

  it("reports the line of a syntax error and of a validation error", () => {
    const good = JSON.stringify({ messages: [{ role: "user", content: "hi" }] });
    const syntax = check([good, good, '{"messages": [}'].join("\n"));
    expect(syntax.ok).toBe(false);
    if (!syntax.ok) {
      expect(syntax.status).toBe(400);
      expect(syntax.errors[0]).toMatchObject({ path: "(line 3)", line: 3, column: 15 });
      expect(syntax.errors[0].message).toBe("Invalid JSON: Unexpected '}', expected a value at line 3, column 15");
    }
    const invalid = check([good, "", JSON.stringify({ messages: [{ role: "human", content: "x" }] })].join("\n"));
    expect(invalid.ok).toBe(false);
    if (!invalid.ok) {
      expect(invalid.errors[0]).toMatchObject({ path: "messages[0].role", line: 3, message: "Invalid role value: 'human'" });
    }
  });
});

describe("the Turnscope format", () => {
  it("takes one conversation object on its own", () => {
    const r = success(JSON.stringify({ name: "solo", messages: [{ role: "user", content: "hi" }] }));
    expect(r.format).toBe("turnscope");
    expect(r.conversations[0].name).toBe("solo");
  });

  it("leaves role: tool messages alone when the file has Turnscope steps", () => {
    const data = {
      conversations: [
        {
          messages: [
            { role: "assistant", content: "x", steps: [{ thinking: "t" }] },
            { role: "tool", content: "result", tool_call_id: "c" },
          ],
        },
      ],
    };
    const r = success(JSON.stringify(data));
    expect(r.format).toBe("turnscope");
    expect(r.conversations[0].messages.map((m) => m.role)).toEqual(["assistant", "tool"]);
  });
});

describe("content parts: a tool_call part whose value is JSON text", () => {
  const line = (value: string) =>
    JSON.stringify({
      messages: [
        { role: "user", content: [{ type: "text", value: "Area of a circle of radius 2?" }] },
        { role: "assistant", content: [{ type: "reasoning", value: "Use the tool." }, { type: "tool_call", value }] },
        { role: "tool", content: [{ type: "text", value: '{"area": 12.566}' }] },
        { role: "assistant", content: [{ type: "text", value: "About 12.57." }] },
      ],
    });

  it("parses the JSON text into the call's name and arguments (LLaMA-Factory reason_tool_use)", () => {
    const r = success([line('{"name": "circle_area", "arguments": {"radius": 2}}'), line('{"name": "circle_area", "arguments": "{\\"radius\\": 3}"}')].join("\n"));
    expect(r.format).toBe("content_parts");
    expect(r.notImported).toEqual([]);
    const steps = r.conversations[0].messages[1].steps;
    expect(steps.map((s) => s.thinking ?? s.toolCall ?? s.toolResult ?? s.outputContent)).toEqual([
      "Use the tool.",
      { name: "circle_area", arguments: { radius: 2 } },
      '{"area": 12.566}',
      "About 12.57.",
    ]);
    expect(r.conversations[1].messages[1].steps[1].toolCall).toEqual({ name: "circle_area", arguments: { radius: 3 } });
  });

  it("refuses JSON text that does not parse, naming the field and the cause", () => {
    const r = check([line('{"name": "circle_area", "arguments": {"radius": 2}'), line('{"tool": "circle_area"}')].join("\n"));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const messages = r.errors.map((e) => e.message);
    expect(messages.some((m) => m.startsWith("Missing required field 'name': the call is JSON text in 'value' that does not parse ("))).toBe(true);
    expect(messages).toContain("Missing required field 'name': the call is JSON text in 'value' without a 'name'");
    expect(r.errors.every((e) => e.suggestion.includes("JSON text of"))).toBe(true);
  });
});

describe("a refusal suggests a rename only when it would work", () => {
  it("MT-Bench questions alone: 'turns' holds bare strings, so no rename is offered; joining the answers file is", () => {
    const r = check([{ question_id: 81, turns: ["Write a poem.", "Shorter."] }, { question_id: 82, turns: ["Hi"] }].map((x) => JSON.stringify(x)).join("\n"));
    if (r.ok) throw new Error("expected a refusal");
    expect(r.errors[0].message).toBe("2 lines: Missing required field 'messages'");
    expect(r.errors[0].suggestion).not.toMatch(/Rename/);
    expect(r.errors[0].suggestion).toMatch(/join_key/);
  });
});
