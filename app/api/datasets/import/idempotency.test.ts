import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { rawRows } from "@/db/store";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "./route";
import * as importInto from "../[id]/import/route";
import * as datasets from "../route";

const fixture = (name: string) => fs.readFileSync(path.join(process.cwd(), "e2e/fixtures", name), "utf8");
/** Rows of a table, optionally narrowed by a where clause written in the test. */
const n = async (table: string) => Number((await rawRows<{ n: number }>(`select count(*) as n from ${table}`))[0].n);

const createWith = (file: string, key?: string, fields: Record<string, string> = { name: "imported" }, user?: string) =>
  upload(createAndImport.POST, "/api/datasets/import", {
    file,
    fields,
    headers: { ...(key ? { "Idempotency-Key": key } : {}), ...(user ? { "x-user-id": user } : {}) },
  });

const intoDataset = (id: number, file: string, key?: string) =>
  upload(importInto.POST, `/api/datasets/${id}/import`, { file, params: { id }, headers: key ? { "Idempotency-Key": key } : {} });

async function newDataset() {
  const res = await call(datasets.POST, "POST", "/api/datasets", { body: { name: "target" } });
  return res.json.id as number;
}

describe("Idempotency-Key on POST /api/datasets/import", () => {
  it("a retry with the same key and file gets the first outcome, and no second dataset", async () => {
    const before = await n("datasets");
    const first = await createWith(fixture("sample-dataset.json"), "retry-1");
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const retry = await createWith(fixture("sample-dataset.json"), "retry-1");
    expect(retry.status).toBe(201);
    expect(retry.json).toEqual(first.json);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await n("datasets")).toBe(before + 1);
    expect(await n("conversations where dataset_id = " + Number(first.json.dataset_id))).toBe(5);
  });

  it("two requests with one key at the same time make one dataset", async () => {
    const before = await n("datasets");
    const [a, b] = await Promise.all([createWith(fixture("sample-dataset.json"), "race-1"), createWith(fixture("sample-dataset.json"), "race-1")]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.json.dataset_id).toBe(b.json.dataset_id);
    expect(await n("datasets")).toBe(before + 1);
  });

  it("the same key with another file is refused with 422 and a clear message, nothing written", async () => {
    await createWith(fixture("sample-dataset.json"), "reuse-1");
    const before = { datasets: await n("datasets"), conversations: await n("conversations") };
    const other = JSON.stringify({ conversations: [{ messages: [{ role: "user", content: "another file" }] }] });
    const res = await createWith(other, "reuse-1");
    expect(res.status).toBe(422);
    expect(res.json.error.code).toBe("unprocessable");
    expect(res.json.error.message).toContain("Idempotency-Key 'reuse-1' was already used for a different request");
    // Other form fields are another request too.
    const renamed = await createWith(fixture("sample-dataset.json"), "reuse-1", { name: "other name" });
    expect(renamed.status).toBe(422);
    expect({ datasets: await n("datasets"), conversations: await n("conversations") }).toEqual(before);
  });

  it("a refused file's outcome is replayed too", async () => {
    const first = await createWith(fixture("invalid-roles.json"), "bad-1", { name: "x", get_feedback: "false" });
    expect(first.status).toBe(422);
    const retry = await createWith(fixture("invalid-roles.json"), "bad-1", { name: "x", get_feedback: "false" });
    expect(retry.status).toBe(422);
    expect(retry.json).toEqual(first.json);
  });

  it("keys are per caller, and without a key every request imports", async () => {
    const before = await n("datasets");
    const a = await createWith(fixture("sample-dataset.json"), "shared-key", undefined, "alice");
    const b = await createWith(fixture("sample-dataset.json"), "shared-key", undefined, "bob");
    expect(a.json.dataset_id).not.toBe(b.json.dataset_id);
    await createWith(fixture("sample-dataset.json"));
    await createWith(fixture("sample-dataset.json"));
    expect(await n("datasets")).toBe(before + 4);
  });

  it("answers a malformed key with 400 before importing", async () => {
    const before = await n("datasets");
    const res = await createWith(fixture("sample-dataset.json"), "x".repeat(256));
    expect(res.status).toBe(400);
    expect(res.json.error.details[0].path).toBe("Idempotency-Key");
    expect(await n("datasets")).toBe(before);
  });
});

describe("Idempotency-Key on POST /api/datasets/{id}/import", () => {
  it("a retry into the same dataset does not import the file twice", async () => {
    const id = await newDataset();
    const first = await intoDataset(id, fixture("sample-dataset.json"), "into-1");
    expect(first.status).toBe(200);
    const retry = await intoDataset(id, fixture("sample-dataset.json"), "into-1");
    expect(retry.status).toBe(200);
    expect(retry.json).toEqual(first.json);
    expect(await n(`conversations where dataset_id = ${id}`)).toBe(5);
    // The key belongs to this dataset's endpoint: the same key elsewhere is a new request.
    const other = await newDataset();
    expect((await intoDataset(other, fixture("sample-dataset.json"), "into-1")).status).toBe(200);
    expect(await n(`conversations where dataset_id = ${other}`)).toBe(5);
  });
});
