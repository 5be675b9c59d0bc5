// test-stores: no-store (it converts and checks files in memory: lib/import reaches the store only to save, which these tests never do)
import fs from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { checkUpload } from "./index";
import { MAX_ISSUES } from "./issues";

const MB = 1024 * 1024;
const fixture = (name: string) => fs.readFileSync(path.join(process.cwd(), "e2e/fixtures", name), "utf8");
const bytes = (text: string) => new TextEncoder().encode(text);
const check = (value: string | Uint8Array, maxBytes = 50 * MB) => checkUpload(typeof value === "string" ? bytes(value) : value, { maxBytes });
const checkJson = (value: unknown) => check(JSON.stringify(value));
const conv = (messages: unknown[], extra: Record<string, unknown> = {}) => ({ conversations: [{ ...extra, messages }] });

function failure(result: ReturnType<typeof check>) {
  if (result.ok) throw new Error("expected the upload to fail");
  return result;
}
function success(result: ReturnType<typeof check>) {
  if (!result.ok) throw new Error(`expected success, got ${JSON.stringify(result.errors)}`);
  return result;
}

describe("stage 1: size and encoding", () => {
  it("refuses a file over the limit with 413 and both sizes", () => {
    const r = failure(check("x".repeat(3000), 2048));
    expect(r.status).toBe(413);
    expect(r.errors[0].message).toBe("File too large: 2.9 KB exceeds 2.0 KB");
  });

  it("refuses gzip by its magic bytes with 415, even when the content is valid JSON", () => {
    const r = failure(check(gzipSync(fixture("sample-dataset.json"))));
    expect(r.status).toBe(415);
    expect(r.errors[0]).toMatchObject({ path: "(file)", message: "Unsupported file: gzip-compressed data, not a JSON text file" });
    expect(r.errors[0].suggestion).toMatch(/gunzip/);
  });

  it("refuses invalid UTF-8 and UTF-16 with 415, naming the byte", () => {
    const latin1 = Uint8Array.from([...bytes('{"conversations": [{"messages": [{"role": "user", "content": "caf'), 0xe9, ...bytes('"}]}]}')]);
    const r = failure(check(latin1));
    expect(r.status).toBe(415);
    expect(r.errors[0].message).toBe("Unsupported encoding: invalid UTF-8 byte 0xe9 at byte 65");
    expect(failure(check(Uint8Array.from([0xff, 0xfe, 0x7b, 0x00]))).errors[0].message).toMatch(/UTF-16/);
  });

  it("accepts a UTF-8 byte-order mark", () => {
    expect(check(Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes(fixture("sample-dataset.json"))])).ok).toBe(true);
  });

  it("warns about files over 10 MB but imports them", () => {
    const big = JSON.stringify(conv([{ role: "user", content: "x".repeat(11 * MB) }]));
    const r = success(check(big));
    expect(r.warnings[0]).toMatchObject({ path: "(file)", message: "Large file: 11.0 MB is over 10.0 MB" });
  });
});

describe("stage 2: JSON syntax", () => {
  it.each([
    ["", "Invalid JSON: The file is empty at line 1, column 1"],
    ['{"conversations": [', "Invalid JSON: Unexpected end of file, expected a value at line 1, column 20"],
    ["{\n  'conversations': []\n}", "Invalid JSON: Unexpected ''', expected a double-quoted property name at line 2, column 3"],
    ['{"a": 1 "b": 2}', "Invalid JSON: Unexpected '\"', expected ',' or '}' after a property value at line 1, column 9"],
    ['{"a": "x\ny"}', "Invalid JSON: Bad control character in string (line break) at line 1, column 9"],
    ['{"a": 1} {"b": 2}', "Invalid JSON: Unexpected '{' after the end of the JSON value at line 1, column 10"],
    ['{"a": tru}', "Invalid JSON: Unexpected 't', expected a value at line 1, column 7"],
  ])("%j → %s", (text, message) => {
    const r = failure(check(text));
    expect(r.status).toBe(400);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0].message).toBe(message);
    expect(r.errors[0].suggestion).not.toBe("");
  });

  it("refuses nesting deeper than the limit with 422 and its position", () => {
    const r = failure(check(`{"conversations": ${"[".repeat(500)}${"]".repeat(500)}}`));
    expect(r.status).toBe(422);
    expect(r.errors[0].message).toMatch(/^Nesting too deep: more than 128 levels .* at line 1, column \d+$/);
  });
});

describe("stage 3: structure", () => {
  it("names the missing conversations, messages and roles with their paths", () => {
    expect(failure(checkJson({})).errors).toEqual([
      { path: "conversations", message: "Missing required field 'conversations'", suggestion: 'Add a top-level "conversations" array' },
    ]);
    const r = failure(checkJson({ conversations: [{ turns: [] }, { messages: [{ content: "x" }, "hi"] }] }));
    expect(r.errors).toEqual([
      { path: "conversations[0].messages", message: "Missing required field 'messages'", suggestion: "Rename 'turns' to 'messages'" },
      { path: "conversations[1].messages[0].role", message: "Missing required field 'role'", suggestion: "Add 'role' with one of: user, assistant, system, tool" },
      {
        path: "conversations[1].messages[1]",
        message: "Invalid type for 'message': expected an object, got string",
        suggestion: `'message' must be an object, e.g. {"role": "user", "content": "..."}`,
      },
    ]);
  });

  it("stops before the value checks when the structure is broken", () => {
    const r = failure(checkJson({ conversations: [{ messages: [{ content: "x" }] }, { messages: [{ role: "bot" }] }] }));
    expect(r.errors.map((e) => e.message)).toEqual(["Missing required field 'role'"]);
  });

  it("refuses an empty conversations array and a root that is not an object", () => {
    expect(failure(checkJson({ conversations: [] })).errors[0].message).toBe("No conversations to import: 'conversations' is empty");
    expect(failure(checkJson({ conversations: {} })).errors[0]).toMatchObject({
      path: "conversations",
      message: "Invalid type for 'conversations': expected an array, got object",
    });
    expect(failure(checkJson("text")).errors[0].path).toBe("(root)");
  });

  it("groups identical faults before the cap: 250 of one fault read as one group of 250, not 200 and '50 more'", () => {
    const messages = Array.from({ length: 250 }, () => ({ content: "x" }));
    const r = failure(checkJson(conv(messages)));
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ path: "conversations[0].messages[0..249].role", count: 250 });
    expect(r.errors[0].message).toBe("250 messages: Missing required field 'role'");
  });

  it("counts a fault repeated past the issues it keeps exactly, and says its ranges are cut", () => {
    const messages = Array.from({ length: 2500 }, () => ({ content: "x" }));
    const r = failure(checkJson(conv(messages)));
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ path: "conversations[0].messages[0..999,…].role", count: 2500 });
    expect(r.errors[0].message).toMatch(/^2500 messages: /);
  });

  it("caps the distinct faults at 200, then says how many more errors there were", () => {
    // Each role value is its own fault (the message names the value).
    const messages = Array.from({ length: 250 }, (_, i) => ({ role: `r${i}`, content: "x" }));
    const r = failure(checkJson(conv(messages)));
    expect(r.errors).toHaveLength(MAX_ISSUES + 1);
    expect(r.errors[MAX_ISSUES].message).toBe("…and 50 more errors of other kinds (only the first 200 kinds are listed)");
  });

  it("groups one fault repeated over many conversations into one issue with the ranges", () => {
    const conversations = Array.from({ length: 80 }, (_, i) => ({ name: `c${i}`, turns_of_talk: [] }));
    const r = failure(checkJson({ conversations }));
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ path: "conversations[0..79].messages", count: 80 });
    expect(r.errors[0].message).toMatch(/^80 conversations: Missing required field 'messages'/);
    // Different faults stay apart, and each group is ordered by where it first appears.
    const mixed = failure(checkJson(conv([{ role: "bot", content: "a" }, { role: "narrator", content: "b" }, { role: "bot", content: "c" }])));
    expect(mixed.errors.map((e) => [e.path, e.count])).toEqual([
      ["conversations[0].messages[0,2].role", 2],
      ["conversations[0].messages[1].role", undefined],
    ]);
  });
});

describe("stage 4: types and values", () => {
  it("maps role aliases and case, and lists the allowed roles otherwise", () => {
    const r = failure(checkJson(conv([{ role: "ai" }, { role: "model" }, { role: "User" }, { role: "narrator" }, { role: 3 }])));
    expect(r.errors.map((e) => [e.message, e.suggestion])).toEqual([
      ["Invalid role value: 'ai'", "Use 'assistant' instead of 'ai'"],
      ["Invalid role value: 'model'", "Use 'assistant' instead of 'model'"],
      ["Invalid role value: 'User'", "Use 'user' (roles are lower case)"],
      ["Invalid role value: 'narrator'", "Use one of: user, assistant, system, tool"],
      ["Invalid role value: 3 (a integer, expected one of user, assistant, system, tool)", "Use one of: user, assistant, system, tool"],
    ]);
  });

  it("requires meta to be an object, naming the expected type", () => {
    const r = failure(checkJson(conv([{ role: "user", content: "x", meta: [1] }], { meta: "web" })));
    expect(r.errors).toEqual([
      {
        path: "conversations[0].messages[0].meta",
        message: "Invalid type for 'meta': expected an object, got array",
        suggestion: `'meta' must be an object, e.g. {"channel": "web"}`,
      },
      {
        path: "conversations[0].meta",
        message: "Invalid type for 'meta': expected an object, got string",
        suggestion: `'meta' must be an object, e.g. {"channel": "web"}`,
      },
    ]);
  });

  it("checks the types of content, name, steps and tool calls", () => {
    const r = failure(
      checkJson(
        conv(
          [
            { role: "user", content: ["a", "b"] },
            {
              role: "assistant",
              content: "ok",
              steps: [
                { tool_call: "search()" },
                { tool_call: { arguments: {} } },
                { tool_call: { name: "search", arguments: '{"q": 1}' } },
                { thinking: 5 },
                { content: "hi" },
                "step",
              ],
            },
          ],
          { name: 7 },
        ),
      ),
    );
    expect(r.errors.map((e) => `${e.path} | ${e.message} | ${e.suggestion}`)).toEqual([
      "conversations[0].messages[0].content | Invalid type for 'content': expected a string, got array | 'content' must be a string, e.g. the text parts joined into one string",
      "conversations[0].messages[1].steps[0].tool_call | Invalid type for 'tool_call': expected an object, got string | 'tool_call' must be an object, e.g. {\"name\": \"search\", \"arguments\": {\"q\": \"...\"}}",
      "conversations[0].messages[1].steps[1].tool_call.name | Missing required field 'name' | A tool call looks like {\"name\": \"search\", \"arguments\": {\"q\": \"...\"}}",
      "conversations[0].messages[1].steps[2].tool_call.arguments | Invalid type for 'arguments': expected an object, got string | 'arguments' must be an object, e.g. the parsed JSON, not a string",
      "conversations[0].messages[1].steps[3].thinking | Invalid type for 'thinking': expected a string, got integer | 'thinking' must be a string",
      "conversations[0].messages[1].steps[4] | Step has none of thinking, tool_call, tool_result, output_content | Rename 'content' to 'output_content'",
      "conversations[0].messages[1].steps[5] | Invalid type for 'step': expected an object, got string | 'step' must be an object, e.g. {\"thinking\": \"...\"}",
      "conversations[0].name | Invalid type for 'name': expected a string, got integer | 'name' must be a string",
    ]);
  });
});

describe("warnings (soft rules)", () => {
  const agents = [
    { name: "travel", tools: { search_flights: { name: "search_flights", parameters: { origin: "string", passengers: "number" } } } },
  ];

  it("does not warn about an assistant turn that only calls tools: its steps are its content", () => {
    const calls = [{ role: "user", content: "fly me to Lisbon" }, { role: "assistant", content: null, steps: [{ tool_call: { name: "search_flights", arguments: { origin: "BOS", passengers: 1 } } }] }];
    expect(success(checkJson({ conversations: [{ agents, messages: calls }] })).warnings).toEqual([]);
    // A thinking step alone is not an answer: the empty turn is still worth a warning.
    const thought = [{ role: "user", content: "hi" }, { role: "assistant", content: "", steps: [{ thinking: "hmm" }] }];
    expect(success(checkJson(conv(thought))).warnings.map((w) => w.message)).toEqual(["Message has no content"]);
  });

  it("warns about a message without content, and refuses one whose text is in a field no import reads", () => {
    const r = success(checkJson(conv([{ role: "user", content: "hi" }, { role: "assistant", content: null }])));
    expect(r.warnings).toEqual([
      {
        path: "conversations[0].messages[1]",
        message: "Message has no content",
        suggestion: "Add 'content' with the message text; without it message-level metrics have nothing to judge",
      },
    ]);
    expect(r.notImported).toEqual([]);
    // Text under 'text' would be stored as an empty message: refused with the path, never "complete".
    const refused = checkJson(conv([{ role: "user", text: "hi" }, { role: "assistant", content: null }]));
    expect(refused).toMatchObject({ ok: false, status: 422, notImported: [{ path: "conversations[].messages[].text", characters: 2 }] });
    if (refused.ok) return;
    expect(refused.errors).toEqual([
      {
        path: "conversations[0].messages[0].text",
        message: "This message would be stored empty, but the file has 2 characters of text in it ('text') that no field of the import reads",
        suggestion: "Rename 'text' to 'content', or send a mapping whose content field is 'text'",
      },
    ]);
  });

  it("warns about undeclared tools and argument types that differ from the declared parameters", () => {
    const steps = [
      { tool_call: { name: "search_flights", arguments: { origin: "BOS", passengers: "one" } } },
      { tool_call: { name: "book_hotel", arguments: {} } },
    ];
    const r = success(checkJson(conv([{ role: "user", content: "go" }, { role: "assistant", content: "ok", steps }], { agents })));
    expect(r.warnings).toEqual([
      {
        path: "conversations[0].messages[1].steps[0].tool_call.arguments.passengers",
        message: "Argument 'passengers' of 'search_flights' is string, declared number",
        suggestion: "Pass 'passengers' as a number, or correct the declared parameter type",
      },
      {
        path: "conversations[0].messages[1].steps[1].tool_call.name",
        message: "Tool 'book_hotel' is not declared by the conversation's agents",
        suggestion: "Declared tools: search_flights. Fix the name, or add 'book_hotel' to an agent's tools",
      },
    ]);
  });

  it("reads JSON Schema parameters and does not mistake inherited names for declared tools", () => {
    const schemaAgents = [{ tools: [{ name: "lookup", parameters: { type: "object", properties: { id: { type: "integer" } } } }] }];
    const steps = [{ tool_call: { name: "lookup", arguments: { id: 1.5 } } }, { tool_call: { name: "constructor" } }];
    const r = success(checkJson(conv([{ role: "assistant", content: "x", steps }], { agents: schemaAgents })));
    expect(r.warnings.map((w) => w.message)).toEqual([
      "Argument 'id' of 'lookup' is number, declared integer",
      "Tool 'constructor' is not declared by the conversation's agents",
    ]);
  });

  it("does not check tool calls of a conversation that declares no agents", () => {
    const steps = [{ tool_call: { name: "anything", arguments: { a: 1 } } }];
    expect(success(checkJson(conv([{ role: "assistant", content: "x", steps }]))).warnings).toEqual([]);
  });
});

describe("the sample", () => {
  it("passes every stage with the counts of the file", () => {
    const r = success(check(fixture("sample-dataset.json")));
    expect(r.format).toBe("turnscope");
    expect(r.counts).toEqual({ conversations: 5, messages: 19, steps: 21 });
    // The sample deliberately books flight 218 with a number where the tool declares a string.
    expect(r.warnings).toEqual([
      {
        path: "conversations[1].messages[1].steps[1].tool_call.arguments.flight_id",
        message: "Argument 'flight_id' of 'book_flight' is integer, declared string",
        suggestion: "Pass 'flight_id' as a string, or correct the declared parameter type",
      },
    ]);
  });

  it("keeps meta objects exactly, including keys such as __proto__", () => {
    const text = '{"conversations": [{"meta": {"__proto__": {"x": 1}, "constructor": "c", "n": [1.5, null]}, "messages": [{"role": "user", "content": "hi"}]}]}';
    const r = success(check(text));
    expect(JSON.stringify(r.conversations[0].meta)).toBe('{"__proto__":{"x":1},"constructor":"c","n":[1.5,null]}');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});
