/** The judge double follows few-shot examples: the nearest one by shared words, deterministically. */
import { describe, expect, it } from "vitest";
import { examplesSection } from "@/lib/align/few-shot";
import { nearestExample, parseExamples } from "./examples";

const section = examplesSection([
  { text: "[assistant]: refund approved and processed", verdict: { value: true } },
  { text: "[assistant]: unable to locate the account, escalation pending", verdict: { value: false } },
]);

describe("nearestExample", () => {
  it("answers like the example sharing the most words with the judged item", () => {
    expect(nearestExample(`${section}\nDid it work?\n[assistant]: your refund was approved`)).toMatchObject({ verdict: { value: true, reasoning: "like example 1" }, example: 1 });
    expect(nearestExample(`${section}\nDid it work?\n[assistant]: we are unable to locate it`)).toMatchObject({ verdict: { value: false }, example: 2 });
  });

  it("answers nothing without the examples section, and skips an example whose verdict is not JSON", () => {
    expect(nearestExample("Did it work? refund approved")).toBeUndefined();
    expect(parseExamples(section.replace('Verdict: {"value":true}', "Verdict: yes"))).toHaveLength(1);
  });
});
