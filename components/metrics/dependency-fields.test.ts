import { describe, expect, it } from "vitest";
import { dependencyDraftFrom, dependencyDraftToBody } from "./dependency-fields";

describe("metric form: dependency fields", () => {
  it("sends the checked dependencies and the skip rule the user chose", () => {
    expect(dependencyDraftToBody({ depends_on: [], skip: "never", threshold: "0.5" })).toEqual({ errors: {}, body: { depends_on: [], skip_rule: null } });
    expect(dependencyDraftToBody({ depends_on: [3, 7], skip: "failed", threshold: "0.5" }).body).toEqual({ depends_on: [3, 7], skip_rule: { when: "failed" } });
    expect(dependencyDraftToBody({ depends_on: [3], skip: "below", threshold: " 0.25 " }).body).toEqual({ depends_on: [3], skip_rule: { when: "below", threshold: 0.25 } });
  });

  it("refuses a skip rule without a dependency and a threshold that is not a number, at their fields", () => {
    expect(dependencyDraftToBody({ depends_on: [], skip: "failed", threshold: "" })).toEqual({ errors: { skip_rule: "Choose at least one dependency for a skip rule" } });
    expect(dependencyDraftToBody({ depends_on: [1], skip: "below", threshold: "half" }).errors).toEqual({ "skip_rule.threshold": "Give the threshold as a number, e.g. 0.5" });
    expect(dependencyDraftToBody({ depends_on: [1], skip: "below", threshold: "" }).body).toBeUndefined();
  });

  it("starts from the saved metric's dependencies and rule", () => {
    expect(dependencyDraftFrom()).toEqual({ depends_on: [], skip: "never", threshold: "0.5" });
    const saved = { depends_on: [4], skip_rule: { when: "below" as const, threshold: 0.8 } } as unknown as Parameters<typeof dependencyDraftFrom>[0];
    expect(dependencyDraftFrom(saved)).toEqual({ depends_on: [4], skip: "below", threshold: "0.8" });
  });
});
