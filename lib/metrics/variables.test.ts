import { describe, expect, it } from "vitest";
import {
  checkPromptVariables,
  explainInvalidVariable,
  extractVariables,
  findVariables,
  variableCatalogue,
  variablesForLevel,
} from "./variables";

describe("extractVariables", () => {
  it("returns distinct variables in first-seen order", () => {
    expect(extractVariables("Goal: @GOAL\nHistory: @HISTORY\nAgain the goal: @GOAL and @LIST_AGENT")).toEqual([
      "@GOAL",
      "@HISTORY",
      "@LIST_AGENT",
    ]);
  });

  it("reads dotted fields only on the object variables", () => {
    expect(extractVariables("@CURRENT_STEP.tool_call then @PREVIOUS_STEP.tool_result and @CURRENT_MESSAGE.output")).toEqual([
      "@CURRENT_STEP.tool_call",
      "@PREVIOUS_STEP.tool_result",
      "@CURRENT_MESSAGE.output",
    ]);
    // A full stop after a plain variable ends the sentence; it is not a field.
    expect(extractVariables("Read @HISTORY. Then judge @GOAL.Next")).toEqual(["@HISTORY", "@GOAL"]);
    expect(extractVariables("Output: @CURRENT_MESSAGE.output.")).toEqual(["@CURRENT_MESSAGE.output"]);
  });

  it("does not treat e-mail addresses, lower-case or mixed-case words as variables", () => {
    expect(
      extractVariables("Write to ana@example.com or SUPPORT@EXAMPLE.COM, ping @alice, @Goal, @goal, a@B and @@HISTORY"),
    ).toEqual([]);
  });

  it("finds variables next to punctuation and at the edges of the text", () => {
    expect(extractVariables('@GOAL,(@HISTORY) "@CONTENT": [@STEP_NUMBER]')).toEqual(["@GOAL", "@HISTORY", "@CONTENT", "@STEP_NUMBER"]);
  });

  it("keeps unknown upper-case names so they can be rejected, without reading a prefix of a longer word", () => {
    expect(extractVariables("@FOO and @GOALS and @CURRENT_STEP and @CURRENT_STEP.tools")).toEqual([
      "@FOO",
      "@GOALS",
      "@CURRENT_STEP",
      "@CURRENT_STEP.tools",
    ]);
    expect(extractVariables("@HISTORYs")).toEqual([]);
  });

  it("reports offsets that cover exactly the variable", () => {
    const prompt = "x @CURRENT_STEP.thinking y @GOAL.";
    for (const v of findVariables(prompt)) expect(prompt.slice(v.index, v.index + v.length)).toBe(v.name);
  });
});

describe("variablesForLevel and checkPromptVariables", () => {
  it("offers the API.md catalogue per level", () => {
    const conversation = variablesForLevel("conversation");
    expect(conversation).toEqual([
      "@HISTORY",
      "@GOAL",
      "@LIST_AGENT",
      "@MESSAGES",
      "@USER_MESSAGES",
      "@ASSISTANT_MESSAGES",
      "@FIRST_USER_MSG",
      "@LAST_USER_MSG",
      "@LAST_ASSISTANT_MSG",
    ]);
    const message = variablesForLevel("message");
    expect(message).toEqual([
      ...conversation,
      "@PREVIOUS_USER_MSG",
      "@PREVIOUS_ASSISTANT_MSG",
      "@CURRENT_MESSAGE.output",
      "@CURRENT_MESSAGE.input",
      "@CURRENT_MESSAGE.role",
      "@CURRENT_STEPS",
      "@CURRENT_STEPS_COUNT",
      "@CONTENT",
    ]);
    const step = variablesForLevel("step");
    const fields = ["thinking", "tool_call", "tool_result", "output_content", "output_structured"];
    expect(step).toEqual([
      ...message,
      ...fields.map((f) => `@CURRENT_STEP.${f}`),
      ...fields.map((f) => `@PREVIOUS_STEP.${f}`),
      "@STEP_NUMBER",
    ]);
    expect(new Set(variableCatalogue.map((v) => v.name)).size).toBe(variableCatalogue.length);
  });

  it("marks variables of another level, and unknown ones, as invalid", () => {
    expect(checkPromptVariables("@GOAL @CURRENT_MESSAGE.output @STEP_NUMBER @NOPE", "conversation")).toEqual({
      variables: ["@GOAL", "@CURRENT_MESSAGE.output", "@STEP_NUMBER", "@NOPE"],
      invalid: ["@CURRENT_MESSAGE.output", "@STEP_NUMBER", "@NOPE"],
      isAdvanced: true,
    });
    expect(checkPromptVariables("@CONTENT @PREVIOUS_USER_MSG", "message").invalid).toEqual([]);
    expect(checkPromptVariables("@CURRENT_STEP.thinking", "message").invalid).toEqual(["@CURRENT_STEP.thinking"]);
    expect(checkPromptVariables("@PREVIOUS_STEP.output_structured @STEP_NUMBER @CONTENT", "step").invalid).toEqual([]);
  });

  it("calls a prompt without variables basic mode", () => {
    expect(checkPromptVariables("Was the reply polite? Mail qa@example.com.", "message")).toEqual({
      variables: [],
      invalid: [],
      isAdvanced: false,
    });
  });

  it("explains why a variable is invalid", () => {
    expect(explainInvalidVariable("@STEP_NUMBER", "message")).toBe("@STEP_NUMBER is not available at the message level (only at: step)");
    expect(explainInvalidVariable("@NOPE", "step")).toBe("@NOPE is not a known variable");
    expect(explainInvalidVariable("@CURRENT_STEP.tools", "step")).toMatch(/takes one of \.thinking, \.tool_call/);
  });
});
