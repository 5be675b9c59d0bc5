/**
 * Issue 49.4 over the API: a mapping tried on a file, nothing written — the first conversation as it would be
 * stored, the counts, the score, what it leaves out; or why it would not import. The same preview the import
 * page's mapping editor shows (gzip included, which a browser cannot read as text).
 */
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import * as datasets from "@/app/api/datasets/route";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import * as saved from "../route";
import * as preview from "./route";

const file = JSON.stringify({
  sessions: {
    s1: { title: "Refund", log: [{ w: "C", t: "I want my money back for order 42" }, { w: "A", t: "I can refund order 42 today." }] },
    s2: { title: "Hours", log: [{ w: "C", t: "When are you open?" }, { w: "A", t: "From 9 to 5." }, { w: "N", t: "internal note: check the hours page" }] },
  },
});
const mapping = { version: 2, records: { path: "sessions" }, conversations: { from: "records", messages: "log" }, message: { role: "w", roles: { C: "user", A: "assistant" }, content: "t", skip: [{ path: "w", equals: "N" }] }, name: "title" };

const datasetCount = async () => Number((await call(datasets.GET, "GET", "/api/datasets?limit=1")).headers.get("x-total-count"));

describe("POST /api/import-mappings/preview", () => {
  it("shows the first conversation, the counts, the score and what the mapping leaves out, and writes nothing", async () => {
    const before = await datasetCount();
    const res = await upload(preview.POST, "/api/import-mappings/preview", { file, fields: { mapping: JSON.stringify(mapping) } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ ok: true, conversations: 2, messages: 4 });
    expect(res.json.first_conversation).toMatchObject({ name: "Refund", messages: [{ role: "user", content: "I want my money back for order 42" }, { role: "assistant", content: "I can refund order 42 today." }] });
    expect(res.json.mapping_score.conversations).toBe(2);
    // The skipped note is text of the file the mapping does not store: said, not silently dropped.
    expect(JSON.stringify(res.json.not_imported)).toContain("log");
    expect(await datasetCount()).toBe(before);
  });

  it("a gzip file previews with a mapping that names its container; a saved mapping by id", async () => {
    const gz = gzipSync(Buffer.from(file));
    const withContainer = { ...mapping, records: { ...mapping.records, container: "gzip" } };
    const res = await upload(preview.POST, "/api/import-mappings/preview", { file: gz, filename: "s.json.gz", fields: { mapping: JSON.stringify(withContainer) } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ ok: true, conversations: 2 });
    const stored = await call(saved.POST, "POST", "/api/import-mappings", { body: { name: "sessions preview", mapping } });
    expect(stored.status, stored.text).toBe(201);
    const byId = await upload(preview.POST, "/api/import-mappings/preview", { file, fields: { mapping_id: String(stored.json.id) } });
    expect(byId.json).toMatchObject({ ok: true, messages: 4 });
  });

  it("a mapping that does not import the file says why (200, ok false); a bad form is a 400", async () => {
    const wrong = await upload(preview.POST, "/api/import-mappings/preview", { file, fields: { mapping: JSON.stringify({ ...mapping, records: { path: "nothing_here" } }) } });
    expect(wrong.status).toBe(200);
    expect(wrong.json.ok).toBe(false);
    expect(wrong.json.errors.length).toBeGreaterThan(0);
    const none = await upload(preview.POST, "/api/import-mappings/preview", { file, fields: {} });
    expect(none.status).toBe(400);
    const invalid = await upload(preview.POST, "/api/import-mappings/preview", { file, fields: { mapping: '{"version": 2, "conversations": {"from": "nowhere"}}' } });
    expect(invalid.status).toBe(400);
    expect(invalid.json.error.code).toBe("bad_request");
  });
});
