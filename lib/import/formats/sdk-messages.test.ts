// test-stores: no-store (it converts and checks files in memory: lib/import reaches the store only to save, which these tests never do)
/**
 * Conversations as three SDKs keep them, written from each one's public documentation: the AI SDK's
 * `UIMessage` (parts `text`, `reasoning`, `step-start`, `tool-<name>` with `toolCallId`/`input`/`state`/
 * `output`), OpenAI Responses items (`message`, `reasoning` with `summary`, `function_call` /
 * `function_call_output` paired by `call_id`) and Gemini `contents` (`role: model`, parts `text`,
 * `functionCall`, `functionResponse`). Each imported whole: no text left behind, calls paired with results.
 */
import { describe, expect, it } from "vitest";
import { checkFile as check, formatFixture as fixture, stepKinds as kinds, type Step } from "@/lib/testing/import/formats";

describe("SDK message shapes", () => {
  it("AI SDK UI messages: a tool part is its call and its output, reasoning a thinking step, in the parts' order", () => {
    const r = check(fixture("ai-sdk-ui-messages.json"));
    expect(r.format).toBe("ai_sdk_ui_messages");
    expect(r.notImported).toEqual([]);
    const [c] = r.conversations;
    expect(c.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "What's the weather in Paris?"],
      ["assistant", "It is 18°C in Paris."],
    ]);
    const steps = c.messages[1].steps as Step[];
    expect(kinds(steps)).toEqual(["thinking", "call:getWeather", "result", "output"]);
    expect(steps[1].toolCall).toEqual({ name: "getWeather", arguments: { city: "Paris" }, id: "call_1" });
    expect(steps[2].toolResult).toEqual({ temp: 18 });
  });

  it("AI SDK UI messages: several chats, a tool that failed, a dynamic tool, metadata kept", () => {
    const chat = (id: string, parts: unknown[]) => ({ id, messages: [{ id: `${id}-u`, role: "user", parts: [{ type: "text", text: `Hi from ${id}` }] }, { id: `${id}-a`, role: "assistant", metadata: { model: "gpt-5" }, parts }] });
    const r = check(
      JSON.stringify([
        chat("c1", [{ type: "tool-search", toolCallId: "t1", state: "output-error", input: { q: "flights" }, errorText: "search is down" }, { type: "text", text: "Search failed, sorry." }]),
        chat("c2", [{ type: "dynamic-tool", toolName: "mcp_lookup", toolCallId: "t2", state: "output-available", input: { id: 7 }, output: "found 7" }, { type: "text", text: "Found it." }]),
      ]),
    );
    expect(r.format).toBe("ai_sdk_ui_messages");
    expect(r.notImported).toEqual([]);
    expect(r.conversations).toHaveLength(2);
    const [a, b] = r.conversations.map((c) => c.messages[1]);
    expect(kinds(a.steps as Step[])).toEqual(["call:search", "result", "output"]);
    expect((a.steps as Step[])[1].toolResult).toEqual({ error: "search is down" });
    expect(a.content).toBe("Search failed, sorry.");
    expect(a.meta).toMatchObject({ metadata: { model: "gpt-5" } });
    expect((b.steps as Step[])[0].toolCall).toEqual({ name: "mcp_lookup", arguments: { id: 7 }, id: "t2" });
    expect(r.conversations[0].meta).toMatchObject({ id: "c1" });
  });

  it("OpenAI Responses items: reasoning summary, the function call and its output by call_id, the answer", () => {
    const r = check(fixture("openai-responses.json"));
    expect(r.format).toBe("openai_responses");
    expect(r.notImported).toEqual([]);
    const [c] = r.conversations;
    expect(c.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "What's the weather in Paris?"],
      ["assistant", "It is 18°C and cloudy in Paris."],
    ]);
    const steps = c.messages[1].steps as Step[];
    expect(kinds(steps)).toEqual(["thinking", "call:get_weather", "result", "output"]);
    expect(steps[0].thinking).toBe("Need the weather tool.");
    expect(steps[1].toolCall).toEqual({ name: "get_weather", arguments: { city: "Paris" }, id: "call_1" });
    expect(steps[2].toolResult).toBe("18°C, cloudy");
  });

  it("OpenAI Responses: a response object's instructions and output, and JSON Lines of input lists", () => {
    const response = { id: "resp_1", object: "response", model: "gpt-5", instructions: "Be brief.", output: [{ type: "function_call", call_id: "c9", name: "lookup", arguments: "{\"q\":\"x\"}" }, { type: "message", role: "assistant", content: [{ type: "output_text", text: "Done." }] }] };
    const one = check(JSON.stringify(response));
    expect(one.format).toBe("openai_responses");
    expect(one.conversations[0].messages.map((m) => m.role)).toEqual(["system", "assistant"]);
    expect(one.conversations[0].meta).toMatchObject({ id: "resp_1", model: "gpt-5" });
    const lines = [1, 2].map((n) => JSON.stringify({ input: [{ role: "user", content: `q${n}` }, { type: "function_call", call_id: `k${n}`, name: "f", arguments: "{}" }, { type: "function_call_output", call_id: `k${n}`, output: `r${n}` }] })).join("\n");
    const many = check(lines);
    expect(many.format).toBe("openai_responses");
    expect(many.conversations.map((c) => kinds(c.messages[1].steps as Step[]))).toEqual([["call:f", "result"], ["call:f", "result"]]);
  });

  it("Gemini contents: model turns, the function call and its response, system instruction and a thought", () => {
    const r = check(fixture("gemini-contents.json"));
    expect(r.format).toBe("gemini_contents");
    expect(r.notImported).toEqual([]);
    const [c] = r.conversations;
    expect(c.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "What's the weather in Paris?"],
      ["assistant", "It is 18°C and cloudy in Paris."],
    ]);
    expect(kinds(c.messages[1].steps as Step[])).toEqual(["call:get_weather", "result", "output"]);
    expect((c.messages[1].steps as Step[])[1].toolResult).toEqual({ temp: "18°C", sky: "cloudy" });
    const withSystem = check(JSON.stringify({ systemInstruction: { parts: [{ text: "You are terse." }] }, contents: [{ role: "user", parts: [{ text: "2+2?" }] }, { role: "model", parts: [{ text: "Adding.", thought: true }, { text: "4" }] }] }));
    expect(withSystem.conversations[0].messages.map((m) => [m.role, m.content])).toEqual([["system", "You are terse."], ["user", "2+2?"], ["assistant", "4"]]);
    expect(kinds(withSystem.conversations[0].messages[2].steps as Step[])).toEqual(["thinking", "output"]);
  });

  // The shapes below follow files those SDKs' users write (stored chat rows, AI SDK 4 messages, the Agents
  // SDK's input list, a Gemini request body), with contents of our own.
  it("AI SDK as apps store it: a plain system message among UI messages, one row per line, AI SDK 4's tool-invocation parts", () => {
    const mixed = check(JSON.stringify([{ role: "system", content: "You answer from the knowledge base." }, { role: "user", parts: [{ type: "text", text: "Refund policy?" }] }, { role: "assistant", parts: [{ type: "tool-search_kb", toolCallId: "k1", state: "output-available", input: { query: "refund" }, output: { hits: 3 } }, { type: "text", text: "30 days." }] }]));
    expect(mixed.format).toBe("ai_sdk_ui_messages");
    expect(mixed.conversations[0].messages.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
    const rows = check([{ id: "r1", role: "user", parts: [{ type: "text", text: "run ls" }] }, { id: "r2", role: "assistant", parts: [{ type: "dynamic-tool", toolCallId: "c", toolName: "bash", state: "output-available", input: { cmd: "ls" }, output: "a b" }] }].map((r) => JSON.stringify(r)).join("\n"));
    expect([rows.format, rows.conversations.length]).toEqual(["ai_sdk_ui_messages", 1]);
    expect(kinds(rows.conversations[0].messages[1].steps as Step[])).toEqual(["call:bash", "result"]);
    const invocation = { state: "result", step: 0, toolCallId: "w1", toolName: "weather", args: { city: "Oslo" }, result: { sky: "snow" } };
    const v4 = check(JSON.stringify([
      { id: "1", role: "user", content: "Weather in Oslo?", createdAt: "2025-03-01T10:00:00.000Z", parts: [{ type: "text", text: "Weather in Oslo?" }] },
      { id: "2", role: "assistant", content: "Snow.", createdAt: "2025-03-01T10:00:02.000Z", toolInvocations: [invocation], parts: [{ type: "step-start" }, { type: "tool-invocation", toolInvocation: invocation }, { type: "text", text: "Snow." }] },
    ]));
    expect(v4.format).toBe("ai_sdk_ui_messages");
    expect(v4.notImported).toEqual([]);
    const steps = v4.conversations[0].messages[1].steps as Step[];
    expect(kinds(steps)).toEqual(["call:weather", "result", "output"]);
    expect(steps[0].toolCall).toEqual({ name: "weather", arguments: { city: "Oslo" }, id: "w1" });
    expect(v4.conversations[0].messages[1].meta).toMatchObject({ created_at: "2025-03-01T10:00:02.000Z" });
  });

  it("the Agents SDK's input list and a Gemini request body with its tools and settings", () => {
    const agents = check(JSON.stringify([
      { content: "Weather in Lima?", role: "user" },
      { id: "fc_1", arguments: '{"city":"Lima"}', call_id: "call_7", name: "get_weather", type: "function_call", status: "completed" },
      { call_id: "call_7", output: "Cloudy in Lima", type: "function_call_output" },
      { id: "msg_1", content: [{ annotations: [], text: "It is cloudy.", type: "output_text", logprobs: [] }], role: "assistant", status: "completed", type: "message" },
    ]));
    expect([agents.format, agents.notImported]).toEqual(["openai_responses", []]);
    expect(kinds(agents.conversations[0].messages[1].steps as Step[])).toEqual(["call:get_weather", "result", "output"]);
    const gemini = check(JSON.stringify({
      contents: [
        { role: "user", parts: [{ text: "Find bar" }] },
        { role: "model", parts: [{ functionCall: { name: "search", args: { q: "bar" } } }, { functionCall: { name: "read", args: { path: "/b" } } }] },
        { role: "function", parts: [{ functionResponse: { name: "search", response: { n: 1 } } }, { functionResponse: { name: "read", response: { result: "gone" } } }] },
        { role: "model", parts: [{ text: "Not there." }] },
      ],
      generationConfig: { maxOutputTokens: 64 },
      tools: [{ functionDeclarations: [{ name: "search", description: "Search the files" }] }],
    }));
    expect([gemini.format, gemini.notImported]).toEqual(["gemini_contents", []]);
    expect(kinds(gemini.conversations[0].messages[1].steps as Step[])).toEqual(["call:search", "call:read", "result", "result", "output"]);
    expect(gemini.conversations[0].meta).toMatchObject({ generationConfig: { maxOutputTokens: 64 } });
  });

  it("a plain chat file is not taken for one of them", () => {
    const r = check(JSON.stringify([{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }]));
    expect(r.format).not.toMatch(/ai_sdk|responses|gemini/);
  });
});
