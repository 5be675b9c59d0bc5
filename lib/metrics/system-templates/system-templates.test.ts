import { describe, expect, it } from "vitest";
import { deriveDefinition } from "../definition";
import { checkPromptVariables } from "../variables";
import { systemTemplates } from ".";

const required = {
  conversation: ["Goal Achievement", "Overall Quality", "Customer Satisfaction", "Conversation Efficiency"],
  message: ["Response Helpfulness", "Response Accuracy", "Tone Appropriateness", "Response Completeness"],
  step: ["Tool Selection", "Parameter Accuracy", "Reasoning Quality", "Error Detection"],
};

describe("system templates", () => {
  it("include the twelve named templates at their levels, and at least twelve more", () => {
    for (const [level, names] of Object.entries(required)) {
      for (const name of names) expect(systemTemplates.find((t) => t.name === name)?.evaluationLevel, name).toBe(level);
    }
    expect(systemTemplates.length).toBeGreaterThanOrEqual(24);
  });

  it("have unique keys and names, a category and a description", () => {
    expect(new Set(systemTemplates.map((t) => t.key)).size).toBe(systemTemplates.length);
    expect(new Set(systemTemplates.map((t) => t.name)).size).toBe(systemTemplates.length);
    for (const t of systemTemplates) {
      expect(t.key.startsWith(`${t.evaluationLevel}.`), t.key).toBe(true);
      expect(t.category.length, t.key).toBeGreaterThan(0);
      expect(t.description.length, t.key).toBeGreaterThan(40);
    }
  });

  it("use only variables of their level, at least two each (llm templates)", () => {
    for (const t of systemTemplates.filter((t) => t.kind !== "check")) {
      const check = checkPromptVariables(t.prompt, t.evaluationLevel, t.outputType);
      expect(check.invalid, t.key).toEqual([]);
      expect(check.variables.length, t.key).toBeGreaterThanOrEqual(2);
    }
  });

  it("give json templates a strict object schema with a numeric score", () => {
    for (const t of systemTemplates) {
      expect(() => deriveDefinition(t), t.key).not.toThrow();
      if (t.outputType !== "json") {
        expect(t.outputSchema, t.key).toBeUndefined();
        continue;
      }
      const schema = t.outputSchema as { type: string; properties: Record<string, { type: unknown }>; required: string[]; additionalProperties: boolean };
      expect(schema.type).toBe("object");
      expect(schema.additionalProperties).toBe(false);
      expect(schema.required.sort()).toEqual(Object.keys(schema.properties).sort());
      expect([["number"], ["number", "null"]]).toContainEqual([schema.properties.score.type].flat());
    }
    expect(systemTemplates.filter((t) => t.outputType === "json").length).toBeGreaterThanOrEqual(6);
    expect(systemTemplates.some((t) => t.outputType === "checkbox")).toBe(true);
  });

  it("include check templates whose checks validate at their level, with no prompt variables", () => {
    const checks = systemTemplates.filter((t) => t.kind === "check");
    expect(checks.length).toBeGreaterThanOrEqual(8);
    for (const t of checks) {
      const derived = deriveDefinition(t);
      expect(derived.check?.type, t.key).toBe(t.check?.type);
      expect(derived.templateVariables, t.key).toEqual([]);
      expect(t.outputType, t.key).toBe("checkbox");
    }
  });
});
