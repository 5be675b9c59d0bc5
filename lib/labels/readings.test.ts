import { describe, expect, it } from "vitest";
import { labelScore, metaValue, readingOfLabelValue, readingOfMeta, readingOfResult, ruleHolds } from "./readings";

describe("readings", () => {
  it("reads a judge result per output type; failed results have none", () => {
    expect(readingOfResult("checkbox", { status: "completed", result: { value: false }, score: 0 })).toBe(false);
    expect(readingOfResult("checkbox", { status: "completed", result: null, score: 1 })).toBe(true);
    expect(readingOfResult("checkbox", { status: "failed", result: { value: true }, score: 1 })).toBeUndefined();
    expect(readingOfResult("text", { status: "completed", result: { value: "billing" }, score: null })).toBe("billing");
    expect(readingOfResult("progress", { status: "completed", result: { score: 0.25 }, score: 0.25 })).toBe(0.25);
    expect(readingOfResult("number", { status: "completed", result: { value: 4 }, score: null })).toBeUndefined();
  });

  it("reads a label value and gives it a result-like score", () => {
    expect(readingOfLabelValue("checkbox", true)).toBe(true);
    expect(readingOfLabelValue("checkbox", 1)).toBeUndefined();
    expect(readingOfLabelValue("json", { score: 0.5, x: 1 })).toBe(0.5);
    expect(readingOfLabelValue("progress", null)).toBeUndefined();
    expect(labelScore("checkbox", false)).toBe(0);
    expect(labelScore("number", 3)).toBe(3);
    expect(labelScore("text", "a")).toBeNull();
  });

  it("turns SQLite's json_extract/json_type pair back into JSON values", () => {
    expect(metaValue(1, "true")).toBe(true);
    expect(metaValue(0, "false")).toBe(false);
    expect(metaValue(3, "integer")).toBe(3);
    expect(metaValue("x", "text")).toBe("x");
    expect(metaValue(null, null)).toBeUndefined();
    expect(metaValue('{"a":1}', "object")).toBeUndefined();
  });

  it("applies a rule: ordering needs numbers, equality compares typed values", () => {
    expect(ruleHolds({ op: ">=", value: 1 }, 1)).toBe(true);
    expect(ruleHolds({ op: ">=", value: 1 }, 0.5)).toBe(false);
    expect(ruleHolds({ op: "<", value: 1 }, "0")).toBe(false);
    expect(ruleHolds({ op: "==", value: "solved" }, "solved")).toBe(true);
    expect(ruleHolds({ op: "==", value: 1 }, "1")).toBe(false);
    expect(ruleHolds({ op: "!=", value: true }, false)).toBe(true);
  });

  it("reads a meta reference: pass/fail through its rule, else the field for the output type", () => {
    const ref = { source: "meta" as const, level: "conversation" as const, path: "meta.reward" };
    expect(readingOfMeta({ ...ref, rule: { op: ">=", value: 1 } }, "checkbox", 0)).toBe(false);
    expect(readingOfMeta({ ...ref, rule: { op: ">=", value: 1 } }, "progress", 2)).toBe(true);
    expect(readingOfMeta(ref, "checkbox", 1)).toBe(true);
    expect(readingOfMeta(ref, "checkbox", 0.5)).toBeUndefined();
    expect(readingOfMeta(ref, "progress", 0.75)).toBe(0.75);
    expect(readingOfMeta(ref, "progress", true)).toBe(1);
    expect(readingOfMeta(ref, "text", 3)).toBe("3");
    expect(readingOfMeta(ref, "checkbox", undefined)).toBeUndefined();
  });
});
