/**
 * Inspect AI `.eval` logs (a ZIP archive). Built against the format as Inspect AI writes it,
 * UKGovernmentBEIS/inspect_ai `src/inspect_ai/log/_recorders/eval.py` (commit 44b41cd: `header.json`,
 * `_journal/start.json`, `samples/{id}_epoch_{n}.json` with `attachments` that `attachment://<hash>` strings refer
 * to, `summaries.json`, `reductions.json`), the final `submit` call only in the sample's `output`. The fixture
 * (e2e/fixtures/formats/inspect-browser.eval) is a small synthetic archive of that shape; a real log placed in
 * ../shared/realdata as inspect_log.eval is read too, and skipped saying so when absent.
 */
import fs from "node:fs";
import path from "node:path";
import { zipSync, strToU8 } from "fflate";
import { describe, expect, it } from "vitest";
import { upload } from "@/lib/testing/http/multipart";
import { realdataDir, realdataFileAbsent, realdataHas } from "@/lib/testing/realdata/files";
import * as createAndImport from "@/app/api/datasets/import/route";
import { checkUpload } from "../index";

const fixture = new Uint8Array(fs.readFileSync(path.join(process.cwd(), "e2e/fixtures/formats/inspect-browser.eval")));
const check = (bytes: Uint8Array, maxBytes = 10_000_000) => checkUpload(bytes, { maxBytes });
type Step = { toolCall: Record<string, unknown> | null; toolResult: unknown };

describe("Inspect AI .eval archives", () => {
  it("reads the archive's samples as an eval log: attachments resolved, the final submit call kept, scores in meta", () => {
    const r = check(fixture);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.format).toBe("eval_log");
    const [c] = r.conversations;
    expect(c.messages.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
    // `attachment://a1b2c3` is the system prompt it stands for.
    expect(c.messages[0].content).toMatch(/^You are a helpful assistant attempting to submit/);
    const steps = c.messages[2].steps as Step[];
    expect(steps.filter((s) => s.toolCall).map((s) => s.toolCall?.name)).toEqual(["web_browser_go", "submit"]);
    expect(steps.find((s) => s.toolResult !== null)?.toolResult).toMatch(/^main content:/);
    expect(c.meta).toMatchObject({ target: "Example Domain", scores: { includes: { value: "C" } }, eval: { task: "browser_task", model: "openai/gpt-4o" } });
    expect(r.notImported).toEqual([]);
  });

  it("refuses a ZIP archive that is no .eval log, and an archive expanding past the size limit, saying which", () => {
    const other = zipSync({ "notes.txt": strToU8("hello") });
    const refused = check(other);
    expect(refused).toMatchObject({ ok: false, status: 415, errors: [{ message: expect.stringMatching(/ZIP archive that is not an Inspect AI \.eval log/) }] });
    const big = zipSync({ "samples/a_epoch_1.json": strToU8(JSON.stringify({ id: "a", messages: [], pad: "x".repeat(5000) })) });
    expect(check(big, 4000)).toMatchObject({ ok: false, status: 413, errors: [{ message: expect.stringMatching(/expands to more than/) }] });
    expect(check(new Uint8Array([0x50, 0x4b, 0x03, 0x04, 1, 2, 3]))).toMatchObject({ ok: false, status: 415 });
  });

  it("through the API: the archive imports; other binary files get a clear 415", async () => {
    const imported = await upload(createAndImport.POST, "/api/datasets/import", { file: fixture, filename: "log.eval", fields: { name: "inspect" } });
    expect(imported.status).toBe(201);
    expect(imported.json).toMatchObject({ format: "eval_log", conversations_imported: 1, steps_imported: 5 });
    const pdf = await upload(createAndImport.POST, "/api/datasets/import", { file: new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d, 0x31]), filename: "x.pdf", fields: { name: "pdf" } });
    expect(pdf.status).toBe(415);
    expect(pdf.json.errors[0].message).toMatch(/PDF/);
  });

  it.skipIf(!realdataHas("inspect_log.eval"))("a real .eval log: one conversation per sample and epoch", () => {
    const bytes = new Uint8Array(fs.readFileSync(path.join(realdataDir, "inspect_log.eval")));
    const r = check(bytes, 60_000_000);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.conversations.length).toBeGreaterThan(0);
    expect(r.conversations.every((c) => (c.meta as Record<string, unknown>).scores !== undefined)).toBe(true);
  });
  if (!realdataHas("inspect_log.eval")) it.skip(realdataFileAbsent("inspect_log.eval"), () => {});
});
