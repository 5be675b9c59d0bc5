// test-stores: no-store (it converts and checks files in memory: lib/import reaches the store only to save, which these tests never do)
/**
 * A refusal never suggests a rename it has not checked: every `Rename 'a' to 'b'` in a refusal's errors
 * and warnings was applied to the file (as the import page applies a fix) and the file checked again.
 */
import { describe, expect, it } from "vitest";
import { checkUpload } from "./index";
import { fixUploadText } from "./fix-upload";

const check = (value: unknown, opts: { mapping?: Parameters<typeof checkUpload>[1]["mapping"] } = {}) =>
  checkUpload(new TextEncoder().encode(JSON.stringify(value)), { maxBytes: 10 * 1024 * 1024, ...opts });

function errorsOf(value: unknown) {
  const r = check(value);
  if (r.ok) throw new Error("expected a refusal");
  return r.errors;
}

/** Every rename a refusal offers, applied to the file as the page would: the place it names is then fine. */
function offeredRenamesWork(value: unknown) {
  const text = JSON.stringify(value);
  for (const issue of errorsOf(value)) {
    const m = issue.suggestion?.match(/^Rename '([^']+)' to '([^']+)'/);
    if (!m) continue;
    const parent = issue.path.endsWith(`.${m[2]}`) ? issue.path.slice(0, -m[2].length - 1) : issue.path;
    const g = (p: string) => p.replace(/\[[\d.,]+\]/g, "[]");
    const fixed = fixUploadText(text, { from: g(`${parent}.${m[1]}`), to: g(`${parent}.${m[2]}`), mapping: {} });
    expect(fixed.ok).toBe(true);
    if (!fixed.ok) continue;
    const again = checkUpload(new TextEncoder().encode(fixed.text), { maxBytes: 10 * 1024 * 1024 });
    if (!again.ok) expect(again.errors.filter((e) => e.path.startsWith(`${parent}.${m[2]}`))).toEqual([]);
  }
}

describe("rename suggestions are checked on the file before they are offered", () => {
  it("a rename that works is offered as it is, and does work", () => {
    const file = { conversations: [{ messages: [{ speaker: "user", content: "Hi" }, { role: "assistant", content: "Hello" }] }] };
    expect(errorsOf(file)).toEqual([
      { path: "conversations[0].messages[0].role", message: "Missing required field 'role'", suggestion: "Rename 'speaker' to 'role'; allowed roles: user, assistant, system, tool" },
    ]);
    offeredRenamesWork(file);
  });

  it("a rename that would leave the field wrong is not offered as a fix: it says what would remain", () => {
    // `speaker` holds numbers: renamed, 'role' would be a number.
    const file = { conversations: [{ messages: [{ speaker: 1, content: "Hi" }, { speaker: 2, content: "Hello" }] }] };
    const [issue] = errorsOf(file);
    expect(issue).toMatchObject({ path: "conversations[0].messages[0..1].role", message: "2 messages: Missing required field 'role'", count: 2 });
    expect(issue.suggestion).toBe("Renaming 'speaker' to 'role' would not import it (checked), it would give: Invalid role value: 1 (a integer, expected one of user, assistant, system, tool)");
    offeredRenamesWork(file);
  });

  it("a step whose text is under 'content' holding an object: the rename to output_content is not offered", () => {
    const file = { conversations: [{ messages: [{ role: "user", content: "Hi" }, { role: "assistant", content: "Done", steps: [{ content: { a: 1 } }] }] }] };
    const [issue] = errorsOf(file);
    expect(issue.path).toBe("conversations[0].messages[1].steps[0]");
    expect(issue.suggestion).toMatch(/^Renaming 'content' to 'output_content' would not import it \(checked\), it would give: /);
    offeredRenamesWork(file);
  });

  it("read with a mapping, a rename cannot be tried on the file: it is not offered as one", () => {
    const file = { conversations: [{ messages: [{ speaker: "user", text: "Hi" }] }] };
    const r = check(file, { mapping: { messages: "messages", role: "role", content: "text" } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    for (const e of r.errors) expect(e.suggestion ?? "").not.toMatch(/^Rename /);
  });
});
