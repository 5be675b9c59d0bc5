import { describe, expect, it } from "vitest";
import { conversationLabel, metaIdLabel } from "./conversation-label";

describe("conversationLabel", () => {
  const base = { name: null, position: 4, meta: null, firstUser: null };

  it("prefers the name, then a meta id, then the first user words, then the position", () => {
    expect(conversationLabel({ ...base, name: "Refund", meta: { task_id: 3 }, firstUser: "hi" })).toBe("Refund");
    expect(conversationLabel({ ...base, meta: { id: "q-881" }, firstUser: "hi" })).toBe("q-881");
    expect(conversationLabel({ ...base, firstUser: "  I want to\n change my flight  " })).toBe("I want to change my flight");
    expect(conversationLabel(base)).toBe("Conversation 5");
    expect(conversationLabel({ ...base, name: "   ", firstUser: "" })).toBe("Conversation 5");
  });

  it("reads task_id before id before question_id, says which id a bare number is, and adds the trial", () => {
    expect(metaIdLabel({ question_id: 81, id: "x1", task_id: 12 })).toBe("task_id 12");
    expect(metaIdLabel({ question_id: 81, id: "" })).toBe("question_id 81");
    expect(metaIdLabel({ task_id: 0, trial: 3, reward: 1 })).toBe("task_id 0 · trial 3");
    expect(metaIdLabel({ task_id: { nested: 1 } })).toBeNull();
    expect(metaIdLabel([1, 2])).toBeNull();
  });

  it("cuts long first words to about 60 characters", () => {
    const label = conversationLabel({ ...base, firstUser: "word ".repeat(40) });
    expect(label.length).toBeLessThanOrEqual(60);
    expect(label.endsWith("…")).toBe(true);
  });
});
