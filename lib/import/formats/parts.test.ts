/**
 * Content parts the shared chat reader (turns.ts) reads under shapes of their own: parts tagged by their one
 * object-valued key instead of a `type` (Gemini's `functionCall` / `functionResponse`), tool parts under a type
 * of their own carrying a call id and input (the AI SDK's `tool-<name>`), a part that is only its type, and a
 * result's `is_error` flag. Units on readContent and convertMessages.
 */
import { describe, expect, it } from "vitest";
import { convertMessages, readContent } from "./turns";

const steps = (content: unknown) => (readContent(content) ?? []).map((p) => (p.kind === "step" ? p.step : { text: p.text }));

describe("content parts by structure", () => {
  it("a part tagged by its one object key: functionCall is a call, functionResponse a result, thought text reasoning", () => {
    expect(steps([{ text: "weighing it", thought: true }, { functionCall: { name: "get_weather", args: { city: "Paris" } } }])).toEqual([
      { thinking: "weighing it" },
      { tool_call: { name: "get_weather", arguments: { city: "Paris" } } },
    ]);
    expect(steps([{ functionResponse: { name: "get_weather", response: { temp: 18 } } }])).toEqual([{ tool_result: { temp: 18 } }]);
  });

  it("a user message holding only tagged results is the tool's reply, folded into the assistant turn", () => {
    const { messages } = convertMessages([
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: [{ functionCall: { name: "get_weather", args: { city: "Paris" } } }] },
      { role: "user", content: [{ functionResponse: { name: "get_weather", response: { temp: 18 } } }] },
      { role: "assistant", content: "18 degrees." },
    ]);
    expect(messages).toHaveLength(2);
    expect((messages[1] as { steps: unknown[] }).steps).toEqual([
      { tool_call: { name: "get_weather", arguments: { city: "Paris" } } },
      { tool_result: { temp: 18 } },
      { output_content: "18 degrees." },
    ]);
  });

  it("a tool part under its own type with a call id and input is the call, then its output; a part that is only its type adds nothing", () => {
    expect(steps([{ type: "step-start" }, { type: "tool-getWeather", toolCallId: "c1", state: "output-available", input: { city: "Paris" }, output: { temp: 18 } }, { type: "text", text: "18." }])).toEqual([
      { tool_call: { name: "getWeather", arguments: { city: "Paris" }, id: "c1" } },
      { tool_result: { temp: 18 } },
      { text: "18." },
    ]);
    expect(steps([{ type: "dynamic-tool", toolName: "search", toolCallId: "c2", input: { q: "x" }, errorText: "rate limited" }])).toEqual([
      { tool_call: { name: "search", arguments: { q: "x" }, id: "c2" } },
      { tool_result: { error: "rate limited" } },
    ]);
    // An unknown part that carries something still leaves a placeholder.
    expect(steps([{ type: "widget", spec: { kind: "chart" } }])).toEqual([{ text: "[widget]" }]);
  });

  it("a tool_result block's is_error stays with the result; one without it is stored as it was", () => {
    expect(steps([{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "No such file." }], is_error: true }])).toEqual([{ tool_result: { content: "No such file.", is_error: true } }]);
    expect(steps([{ type: "tool_result", tool_use_id: "t2", content: "ok", is_error: false }])).toEqual([{ tool_result: "ok" }]);
  });
});
