// test-stores: no-store (it converts and checks files in memory: lib/import reaches the store only to save, which these tests never do)
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SuggestedTransformation } from "@/lib/schemas/imports";
import { applyTransformation, parseFieldPath } from "./apply-transformation";
import { rulesFeedback } from "./feedback";
import { fixedFileName, fixUploadText } from "./fix-upload";
import { checkUpload } from "./index";
import { conversationKeys } from "./formats/records";
import { fieldAliases } from "./suggestions";

const fixture = (name: string) => fs.readFileSync(path.join(process.cwd(), "e2e/fixtures", name), "utf8");
const check = (text: string) => checkUpload(new TextEncoder().encode(text), { maxBytes: 50 * 1024 * 1024 });

/** Import `text`; it must fail, and the rules' feedback must suggest a transformation, which is returned. */
function suggestedFix(text: string): SuggestedTransformation {
  const checked = check(text);
  if (checked.ok) throw new Error("expected the upload to fail");
  const feedback = rulesFeedback({
    errors: checked.feedbackInput?.errors ?? checked.errors,
    data: checked.feedbackInput?.data,
    excerpt: text.slice(0, 4000),
    format: checked.format,
  });
  if (!feedback.suggested_transformation) throw new Error(`no transformation suggested for ${text.slice(0, 80)}`);
  return feedback.suggested_transformation;
}

/** Apply the suggested fix the way the import page does and check the result again. */
function fixAndCheck(text: string) {
  const transformation = suggestedFix(text);
  const fixed = fixUploadText(text, transformation);
  if (!fixed.ok) throw new Error(fixed.reason);
  return { transformation, fixed, checked: check(fixed.text) };
}

describe("the rules' fix for each invalid fixture", () => {
  it("invalid-roles.json: mapping human/bot makes the file import, keeping everything else", () => {
    const text = fixture("invalid-roles.json");
    expect(check(text)).toMatchObject({ ok: false, status: 422 });
    const { transformation, fixed, checked } = fixAndCheck(text);
    expect(transformation).toEqual({
      from: "conversations[].messages[].role",
      to: "conversations[].messages[].role",
      mapping: { human: "user", bot: "assistant" },
    });
    expect(fixed).toMatchObject({ renamed: 0, mapped: 4, conflicts: 0 });
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    expect(checked.conversations[0].messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    const expected = JSON.parse(text) as { conversations: Array<{ messages: Array<{ role: string }> }> };
    for (const m of expected.conversations[0].messages) m.role = m.role === "bot" ? "assistant" : "user";
    expect(JSON.parse(fixed.text)).toEqual(expected);
  });

  it("invalid-no-conversations.json: renaming dialogs to conversations makes the file import", () => {
    const { transformation, fixed, checked } = fixAndCheck(fixture("invalid-no-conversations.json"));
    expect(transformation).toEqual({ from: "dialogs", to: "conversations", mapping: {} });
    expect(fixed).toMatchObject({ renamed: 1, mapped: 0 });
    expect(checked).toMatchObject({ ok: true, counts: { conversations: 1, messages: 1 } });
  });

  it("invalid-missing-role.json: the speaker rename removes its error; the message with no role at all still needs a person", () => {
    const text = fixture("invalid-missing-role.json");
    const before = check(text);
    expect(before.ok ? [] : before.errors.map((e) => e.path)).toEqual(["conversations[0].messages[1].role", "conversations[1].messages[0].role"]);
    const { transformation, fixed, checked } = fixAndCheck(text);
    expect(transformation).toEqual({ from: "conversations[].messages[].speaker", to: "conversations[].messages[].role", mapping: {} });
    expect(fixed).toMatchObject({ renamed: 1, mapped: 0 });
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.errors.map((e) => e.path)).toEqual(["conversations[0].messages[1].role"]);
    expect((JSON.parse(fixed.text) as { conversations: Array<{ messages: unknown[] }> }).conversations[1].messages[0]).toEqual({ role: "user", content: "x" });
  });
});

describe("every transformation the rules can emit applies", () => {
  const messages = [
    { role: "human", content: "hi" },
    { role: "bot", content: "hello" },
  ];
  it.each(fieldAliases.root.conversations)("root alias '%s' → conversations", (alias) => {
    const text = JSON.stringify({ [alias]: [{ messages: [{ role: "user", content: "hi" }] }] });
    const { transformation, checked } = fixAndCheck(text);
    expect(transformation).toMatchObject({ from: alias, to: "conversations" });
    expect(checked.ok).toBe(true);
  });

  // Keys the records adapter reads as they are need no fix: the file imports directly.
  const readDirectly: readonly string[] = conversationKeys;
  it.each(fieldAliases.conversation.messages.filter((a) => readDirectly.includes(a)))("conversation key '%s' imports as it is", (alias) => {
    const text = JSON.stringify({ conversations: [{ name: "a", [alias]: [{ role: "user", content: "hi" }], meta: {} }] });
    const checked = check(text);
    expect(checked).toMatchObject({ ok: true, format: "records", counts: { conversations: 1, messages: 1 } });
    if (checked.ok) expect(checked.conversations[0]).toMatchObject({ name: "a", messages: [{ role: "user", content: "hi" }] });
  });

  it.each(fieldAliases.conversation.messages.filter((a) => !readDirectly.includes(a)))("conversation alias '%s' → messages", (alias) => {
    const text = JSON.stringify({ conversations: [{ name: "a", [alias]: [{ role: "user", content: "hi" }], meta: {} }] });
    const { transformation, fixed, checked } = fixAndCheck(text);
    expect(transformation).toMatchObject({ from: `conversations[].${alias}`, to: "conversations[].messages" });
    expect(checked.ok).toBe(true);
    // Renamed in place: the key order of the conversation is kept.
    expect(Object.keys((JSON.parse(fixed.text) as { conversations: object[] }).conversations[0])).toEqual(["name", "messages", "meta"]);
  });

  it.each(fieldAliases.message.role)("message alias '%s' → role, with role values mapped on the way", (alias) => {
    const text = JSON.stringify({ conversations: [{ messages: messages.map(({ role, content }) => ({ [alias]: role, content })) }] });
    const { transformation, fixed, checked } = fixAndCheck(text);
    expect(transformation).toEqual({
      from: `conversations[].messages[].${alias}`,
      to: "conversations[].messages[].role",
      mapping: { human: "user", bot: "assistant" },
    });
    expect(fixed).toMatchObject({ renamed: 2, mapped: 2 });
    expect(checked.ok && checked.conversations[0].messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("a single conversation object (no `conversations`) is fixed in the Turnscope shape the feedback was written for", () => {
    const text = JSON.stringify({ name: "solo", messages: [{ speaker: "customer", content: "hi" }, { speaker: "agent", content: "yo" }] });
    const { transformation, fixed, checked } = fixAndCheck(text);
    expect(transformation.from).toBe("conversations[].messages[].speaker");
    expect(JSON.parse(fixed.text)).toEqual({
      conversations: [{ name: "solo", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "yo" }] }],
    });
    expect(checked.ok).toBe(true);
  });

  it("JSON Lines uploads come back as one JSON file", () => {
    const text = [{ messages: [{ role: "human", content: "a" }] }, { messages: [{ role: "ai", content: "b" }] }].map((l) => JSON.stringify(l)).join("\n");
    const { checked } = fixAndCheck(text);
    expect(checked).toMatchObject({ ok: true, format: "turnscope", counts: { conversations: 2 } });
  });
});

describe("applyTransformation", () => {
  it("leaves its input untouched and shares what it did not change", () => {
    const data = { conversations: [{ messages: [{ role: "bot" }], meta: { a: 1 } }, { messages: [{ role: "user" }] }] };
    const snapshot = structuredClone(data);
    const result = applyTransformation(data, { from: "conversations[].messages[].role", to: "conversations[].messages[].role", mapping: { bot: "assistant" } });
    expect(data).toEqual(snapshot);
    expect(result).toMatchObject({ ok: true, mapped: 1 });
    if (!result.ok) return;
    const out = result.data as typeof data;
    expect(out.conversations[0].messages[0].role).toBe("assistant");
    expect(out.conversations[0].meta).toBe(data.conversations[0].meta);
    expect(out.conversations[1]).toBe(data.conversations[1]);
  });

  it("reads the path forms a model writes: [*], $., an index, a missing [], a quoted key", () => {
    const data = { conversations: [{ messages: [{ who: "bot" }, { who: "human" }] }, { messages: [{ who: "bot" }] }] };
    const roles = (r: ReturnType<typeof applyTransformation>) =>
      r.ok ? (r.data as { conversations: Array<{ messages: Array<Record<string, string>> }> }).conversations.map((c) => c.messages.map((m) => m.role ?? m.who)) : r.reason;
    const mapping = { bot: "assistant", human: "user" };
    const all = [["assistant", "user"], ["assistant"]];
    expect(roles(applyTransformation(data, { from: "$.conversations[*].messages[*].who", to: "$.conversations[*].messages[*].role", mapping }))).toEqual(all);
    expect(roles(applyTransformation(data, { from: "conversations.messages.who", to: "conversations.messages.role", mapping }))).toEqual(all);
    expect(roles(applyTransformation(data, { from: "conversations[1].messages[].who", to: "conversations[1].messages[].role", mapping }))).toEqual([["bot", "human"], ["assistant"]]);
    expect(roles(applyTransformation({ conversations: [{ messages: [{ "the who": "bot" }] }] }, { from: 'conversations[].messages[]."the who"', to: "conversations[].messages[].role", mapping }))).toEqual([["assistant"]]);
  });

  it("maps values of an array at the end of the path, and starts at a root array", () => {
    expect(applyTransformation([{ tags: ["bot", "x"] }], { from: "[].tags[]", to: "[].tags[]", mapping: { bot: "assistant" } })).toMatchObject({
      ok: true,
      data: [{ tags: ["assistant", "x"] }],
      mapped: 1,
    });
  });

  it("keeps an existing target field rather than overwriting it", () => {
    const data = { conversations: [{ messages: [{ speaker: "bot", role: "assistant" }] }] };
    const result = applyTransformation(data, { from: "conversations[].messages[].speaker", to: "conversations[].messages[].role", mapping: null });
    expect(result).toMatchObject({ ok: true, renamed: 0, conflicts: 1 });
    expect(result.ok && result.data).toBe(data);
  });

  it("refuses paths of different shapes and keys that reach prototypes", () => {
    expect(applyTransformation({}, { from: "a[].b", to: "a.b", mapping: null })).toMatchObject({ ok: false });
    expect(applyTransformation({}, { from: "a.b", to: "c", mapping: null })).toMatchObject({ ok: false });
    for (const key of ["__proto__", "constructor", "prototype"]) {
      expect(applyTransformation({}, { from: `a.${key}`, to: "a.b", mapping: null })).toMatchObject({ ok: false });
      expect(applyTransformation({}, { from: "a.b", to: `a.${key}`, mapping: null })).toMatchObject({ ok: false });
    }
    for (const bad of ["", "a..b", "a.", "a[x]", "a[", ".a", 'a."b']) expect(parseFieldPath(bad).ok, bad).toBe(false);
  });

  it("keeps a `__proto__` key of the data an ordinary key, and maps no value through Object.prototype", () => {
    const data = JSON.parse('{"__proto__": {"polluted": true}, "items": [{"speaker": "constructor"}, {"speaker": "toString"}]}') as unknown;
    const result = applyTransformation(data, { from: "items[].speaker", to: "items[].role", mapping: { bot: "assistant" } });
    expect(result).toMatchObject({ ok: true, renamed: 2, mapped: 0 });
    if (!result.ok) return;
    const out = result.data as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(["__proto__", "items"]);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true},"items":[{"role":"constructor"},{"role":"toString"}]}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("maps through a mapping that itself came from JSON with a `__proto__` key", () => {
    const mapping = JSON.parse('{"__proto__": "user", "bot": "assistant"}') as Record<string, string>;
    const result = applyTransformation({ r: ["__proto__", "bot"] }, { from: "r[]", to: "r[]", mapping });
    expect(result).toMatchObject({ ok: true, data: { r: ["user", "assistant"] }, mapped: 2 });
  });
});

describe("fixUploadText", () => {
  it("says why when the file does not parse or the fix changes nothing", () => {
    const t = { from: "dialogs", to: "conversations", mapping: {} };
    expect(fixUploadText("{not json", t)).toMatchObject({ ok: false, reason: expect.stringContaining("not valid JSON") });
    expect(fixUploadText('{"conversations": []}', t)).toMatchObject({ ok: false, reason: expect.stringContaining("changes nothing") });
  });

  it("names the fixed file after the upload", () => {
    expect(fixedFileName("invalid-roles.json")).toBe("invalid-roles.fixed.json");
    expect(fixedFileName("export.JSONL")).toBe("export.fixed.json");
    expect(fixedFileName("invalid-roles.fixed.json")).toBe("invalid-roles.fixed.json");
    expect(fixedFileName("notes")).toBe("notes.fixed.json");
  });
});
