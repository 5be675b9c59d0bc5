import { describe, expect, it } from "vitest";
import { buildJudgePrompt, resolveVariables, type ConversationTree, type JudgeStep } from "./resolve";

/** Long, distinct, checkable texts: `tag0000 tag0001 …` up to `length` characters. */
function long(tag: string, length: number): string {
  let out = "";
  for (let i = 0; out.length < length; i++) out += `${tag}${String(i).padStart(4, "0")} `;
  return out.slice(0, length);
}

function step(id: number, position: number, fields: Partial<JudgeStep>): JudgeStep {
  return {
    id,
    position,
    thinking: null,
    toolCall: null,
    toolResult: null,
    outputContent: null,
    outputStructured: null,
    modelName: null,
    agentName: "analyst",
    ...fields,
  };
}

const TOOL_RESULT = { rows: long("row", 6000) };
const REPORT = `Final report:\n${long("finding", 2500)}\nEnd of report.`;
const FIRST_REPLY = `Working on it.\n${long("plan", 1500)}`;

/** An agent run with a long tool result and a long final report that is also its last step's output. */
const tree: ConversationTree = {
  conversation: { id: 1, goal: null, agents: null },
  messages: [
    { id: 10, position: 0, role: "user", content: "Analyse last quarter's sales and write a report.", steps: [] },
    {
      id: 11,
      position: 1,
      role: "assistant",
      content: FIRST_REPLY,
      steps: [step(100, 0, { outputContent: FIRST_REPLY })],
    },
    { id: 12, position: 2, role: "user", content: "Go ahead.", steps: [] },
    {
      id: 13,
      position: 3,
      role: "assistant",
      content: REPORT,
      steps: [
        step(101, 0, { toolCall: { name: "query_sales", arguments: { quarter: "Q3" } } }),
        step(102, 1, { toolResult: TOOL_RESULT }),
        step(103, 2, { thinking: "Summarise the rows by region.", outputContent: REPORT }),
      ],
    },
  ],
};

const occurrences = (haystack: string, needle: string) => haystack.split(needle).length - 1;

describe("@HISTORY shows the whole evidence once", () => {
  it("keeps tool results and the final output complete, and writes each reply once", () => {
    const history = resolveVariables(tree, { type: "conversation", id: 1 }, ["@HISTORY"])["@HISTORY"] ?? "";
    expect(history).not.toMatch(/more characters|characters cut/);
    // The whole tool result, not its first 500 characters.
    expect(history).toContain(JSON.stringify(TOOL_RESULT));
    // Every line of the multi-line final report, in order, exactly once.
    expect(occurrences(history, REPORT)).toBe(1);
    expect(occurrences(history, FIRST_REPLY)).toBe(1);
    expect(occurrences(history, long("finding", 2500))).toBe(1);
    expect(history).toContain("  - step 3 (analyst): thinking: Summarise the rows by region.; output: (the message text above)");
    expect(history).toContain("  - step 1 (analyst): output: (the message text above)");
  });

  it("shows a step output in full when the message has no text of its own", () => {
    const noText: ConversationTree = {
      ...tree,
      messages: tree.messages.map((m) => (m.id === 13 ? { ...m, content: null } : m)),
    };
    const history = resolveVariables(noText, { type: "conversation", id: 1 }, ["@HISTORY"])["@HISTORY"] ?? "";
    expect(history).toContain("[assistant]: (none)");
    expect(occurrences(history, REPORT.replace(/\n/g, "\n    "))).toBe(1);
  });
});

describe("fitting @HISTORY into the judge's context", () => {
  const metric = { prompt: "Did the agent answer the request?\n@HISTORY", evaluationLevel: "conversation" as const, outputType: "checkbox" as const };

  it("sends everything, with no note, when the model's context holds it", () => {
    const result = buildJudgePrompt({ metric, tree, entity: { type: "conversation", id: 1 }, contextTokens: 128_000 });
    expect(result.truncated).toEqual([]);
    expect(result.prompt).toContain(JSON.stringify(TOOL_RESULT));
    expect(result.system).not.toMatch(/shortened/);
    expect(result.budget_tokens).toBe(128_000 - 2048);
    expect(result.token_estimate).toBe(Math.ceil((result.system.length + result.prompt.length) / 3));
  });

  it("cuts the middle of the longest items with a marker, never the final output, and tells the judge", () => {
    const result = buildJudgePrompt({ metric, tree, entity: { type: "conversation", id: 1 }, contextTokens: 4096 });
    expect(result.budget_tokens).toBe(3072);
    expect(result.token_estimate).toBeLessThanOrEqual(3072);
    // The final report arrives whole (it is longer than the cut tool result keeps).
    expect(occurrences(result.prompt, REPORT)).toBe(1);
    expect(result.truncated.map((t) => t.item)).toEqual(["@HISTORY: message 4 (assistant) step 2 tool_result"]);
    const toolCut = result.truncated[0];
    expect(toolCut.removed_characters).toBeGreaterThan(2000);
    // Only as much as needed goes: the prompt uses (nearly) all of its budget.
    expect(result.system.length + result.prompt.length).toBeGreaterThan(3072 * 3 - 100);
    expect(result.prompt).toContain(`[… ${toolCut.removed_characters} characters cut here to fit the judge's context …]`);
    // The cut keeps the beginning and the end of the tool result.
    const json = JSON.stringify(TOOL_RESULT);
    expect(result.prompt).toContain(json.slice(0, 100));
    expect(result.prompt).toContain(json.slice(-100));
    // Shorter items are untouched.
    expect(result.prompt).toContain(FIRST_REPLY);
    expect(result.prompt).toContain("[user]: Analyse last quarter's sales and write a report.");
    expect(result.prompt).toContain('tool_call: {"name":"query_sales","arguments":{"quarter":"Q3"}}');
    expect(result.system).toMatch(/shortened to fit your context window/);
  });

  it("with less room, cuts the next longest item too, down to the same length", () => {
    const result = buildJudgePrompt({ metric, tree, entity: { type: "conversation", id: 1 }, contextTokens: 3000 });
    expect(result.token_estimate).toBeLessThanOrEqual(result.budget_tokens ?? 0);
    expect(result.truncated.map((t) => t.item)).toEqual(["@HISTORY: message 2 (assistant)", "@HISTORY: message 4 (assistant) step 2 tool_result"]);
    const [reply, tool] = result.truncated;
    // Both keep the same number of characters, so the difference in what went is the difference in length.
    expect(tool.removed_characters - reply.removed_characters).toBe(JSON.stringify(TOOL_RESULT).length - FIRST_REPLY.length);
    expect(occurrences(result.prompt, REPORT)).toBe(1);
  });

  it("never cuts the evaluated message at the message level", () => {
    const result = buildJudgePrompt({
      metric: { prompt: "Is this reply supported by the data?\n@HISTORY", evaluationLevel: "message", outputType: "checkbox" },
      tree,
      entity: { type: "message", id: 13 },
      contextTokens: 4096,
    });
    expect(result.prompt).toContain(REPORT);
    expect(result.truncated.length).toBeGreaterThan(0);
  });

  it("cuts a basic-mode prompt's default context the same way", () => {
    const result = buildJudgePrompt({
      metric: { prompt: "Rate the answer.", evaluationLevel: "conversation", outputType: "progress" },
      tree,
      entity: { type: "conversation", id: 1 },
      contextTokens: 4096,
    });
    expect(result.truncated.map((t) => t.item)).toContain("transcript: message 4 (assistant) step 2 tool_result");
    expect(result.prompt).toContain(REPORT);
    expect(result.token_estimate).toBeLessThanOrEqual(result.budget_tokens ?? 0);
  });
});
