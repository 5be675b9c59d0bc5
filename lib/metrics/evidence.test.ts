import { describe, expect, it } from "vitest";
import { docText, estimateTokens, fitDoc, piece, promptBudgetTokens, type Doc } from "./evidence";

const MARKER = /\n\[… (\d+) characters cut here to fit the judge's context …\]\n/g;

/** Distinct, position-revealing text: `a000a001…`, so a cut shows exactly which part survived. */
function text(tag: string, length: number): string {
  let out = "";
  for (let i = 0; out.length < length; i++) out += `${tag}${String(i).padStart(3, "0")}`;
  return out.slice(0, length);
}

describe("fitDoc", () => {
  it("leaves a document that fits as it is", () => {
    const doc: Doc = ["Judge this:\n", piece("a", text("a", 500)), "\n", piece("b", text("b", 300))];
    const fitted = fitDoc(doc, 900);
    expect(fitted).toEqual({ text: docText(doc), truncated: [] });
  });

  it("cuts the middle of the longest item, keeps its beginning and end, and says how much went", () => {
    const long = text("a", 5000);
    const short = text("b", 400);
    const doc: Doc = ["Q: ", piece("long", long), " / ", piece("short", short)];
    const fitted = fitDoc(doc, 2000);
    expect(fitted.text.length).toBeLessThanOrEqual(2000);
    expect(fitted.text).toContain(short);
    const [marker] = [...fitted.text.matchAll(MARKER)];
    const removed = Number(marker[1]);
    expect(fitted.truncated).toEqual([{ item: "long", removed_characters: removed }]);
    const cutLong = fitted.text.slice(3, fitted.text.indexOf(" / "));
    const [head, tail] = cutLong.split(marker[0]);
    expect(long.startsWith(head)).toBe(true);
    expect(long.endsWith(tail)).toBe(true);
    expect(head.length + tail.length + removed).toBe(long.length);
    // Everything the budget allows is used: one more kept character on each side would not fit.
    expect(fitted.text.length).toBeGreaterThan(2000 - 4);
  });

  it("cuts several long items down to one common length and never touches the short ones", () => {
    const doc: Doc = [piece("x", text("x", 6000)), "\n", piece("y", text("y", 3000)), "\n", piece("z", text("z", 300))];
    const fitted = fitDoc(doc, 3000);
    expect(fitted.text.length).toBeLessThanOrEqual(3000);
    expect(fitted.truncated.map((t) => t.item)).toEqual(["x", "y"]);
    const [x, y] = fitted.truncated;
    // Both keep the same number of characters: x loses 3000 more than y.
    expect(x.removed_characters - y.removed_characters).toBe(3000);
    expect(fitted.text).toContain(text("z", 300));
  });

  it("never cuts a kept item (the final output), even when it is the longest", () => {
    const final = text("f", 4000);
    const doc: Doc = [piece("history", text("h", 3000)), "\n", piece("final", final, true)];
    const fitted = fitDoc(doc, 5000);
    expect(fitted.text.length).toBeLessThanOrEqual(5000);
    expect(fitted.text).toContain(final);
    expect(fitted.truncated.map((t) => t.item)).toEqual(["history"]);
  });

  it("counts characters spent elsewhere (the system message) against the budget", () => {
    const doc: Doc = [piece("a", text("a", 3000))];
    expect(fitDoc(doc, 3000).truncated).toEqual([]);
    const fitted = fitDoc(doc, 3000, 1000);
    expect(fitted.text.length).toBeLessThanOrEqual(2000);
    expect(fitted.truncated).toHaveLength(1);
  });

  it("when even the kept items do not fit, keeps a readable minimum of the others and goes over", () => {
    const doc: Doc = [piece("a", text("a", 3000)), piece("final", text("f", 5000), true)];
    const fitted = fitDoc(doc, 1000);
    expect(fitted.text.length).toBeGreaterThan(1000);
    expect(fitted.text).toContain(text("f", 5000));
    expect(fitted.truncated).toEqual([{ item: "a", removed_characters: 3000 - 240 }]);
  });

  it("does not split a surrogate pair at a cut", () => {
    const emoji = "😀".repeat(2000);
    const fitted = fitDoc([piece("e", emoji)], 1000);
    expect(fitted.truncated).toHaveLength(1);
    expect(fitted.text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });
});

describe("token budget", () => {
  it("keeps room for the reply and estimates three characters per token", () => {
    expect(promptBudgetTokens(128_000)).toBe(128_000 - 2048);
    expect(promptBudgetTokens(4096)).toBe(4096 - 1024);
    expect(estimateTokens(3001)).toBe(1001);
  });
});
