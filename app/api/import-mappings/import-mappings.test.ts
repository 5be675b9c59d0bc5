import { describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as importInto from "@/app/api/datasets/[id]/import/route";
import * as conversationsRoute from "@/app/api/datasets/[id]/conversations/route";
import * as conversationRoute from "@/app/api/conversations/[id]/route";
import * as collection from "./route";
import * as item from "./[id]/route";

/** A support-chat export no adapter knows: turns under `dialogue_turns`, `speaker` and `utterance`. */
const file = JSON.stringify([
  {
    ticket: "T-1",
    dialogue_turns: [
      { speaker: "customer", utterance: "My card was charged twice." },
      { speaker: "bot", utterance: "I refunded one of them." },
    ],
  },
]);
const mapping = { messages: "dialogue_turns", role: "speaker", content: "utterance", roles: { customer: "user", bot: "assistant" } };

const as = (user: string) => ({ "x-user-id": user });
const save = (body: unknown, user = "ana") => call(collection.POST, "POST", "/api/import-mappings", { body, headers: as(user) });
const list = (user = "ana") => call(collection.GET, "GET", "/api/import-mappings", { headers: as(user) });
const remove = (id: number | string, user = "ana") =>
  call(item.DELETE, "DELETE", `/api/import-mappings/${id}`, { params: { id }, headers: as(user) });
const importWith = (fields: Record<string, string>, user = "ana") =>
  upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "support", ...fields }, headers: as(user) });

async function messagesOf(datasetId: number) {
  const convs = (await call(conversationsRoute.GET, "GET", `/api/datasets/${datasetId}/conversations`, { params: { id: datasetId } })).json;
  const out = [];
  for (const c of convs as Array<{ id: number }>) {
    const conv = (await call(conversationRoute.GET, "GET", `/api/conversations/${c.id}`, { params: { id: c.id } })).json;
    out.push({ meta: conv.meta, messages: conv.messages.map((m: { role: string; content: string }) => [m.role, m.content]) });
  }
  return out;
}

describe("saved import mappings", () => {
  it("saves a mapping under a name, lists it for its owner only, and an import reads the file with it by mapping_id", async () => {
    const saved = await save({ name: "support export", mapping });
    expect(saved.status).toBe(201);
    expect(saved.json).toMatchObject({ id: expect.any(Number), name: "support export", mapping });
    expect((await list()).json.map((m: { name: string }) => m.name)).toContain("support export");
    expect((await list("bo")).json.map((m: { id: number }) => m.id)).not.toContain(saved.json.id);

    const imported = await importWith({ mapping_id: String(saved.json.id) });
    expect(imported.status).toBe(201);
    expect(imported.json).toMatchObject({ format: "mapping", conversations_imported: 1, messages_imported: 2, not_imported: [] });
    expect(await messagesOf(imported.json.dataset_id)).toEqual([
      {
        meta: { ticket: "T-1" },
        messages: [
          ["user", "My card was charged twice."],
          ["assistant", "I refunded one of them."],
        ],
      },
    ]);

    // The same on the endpoint that imports into an existing dataset.
    const again = await upload(importInto.POST, `/api/datasets/${imported.json.dataset_id}/import`, {
      file,
      fields: { mapping_id: String(saved.json.id) },
      params: { id: imported.json.dataset_id },
      headers: as("ana"),
    });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ format: "mapping", conversations_imported: 1 });
    expect(await messagesOf(imported.json.dataset_id)).toHaveLength(2);
  });

  it("saving a name again replaces its mapping instead of adding one", async () => {
    const first = await save({ name: "replace me", mapping });
    const second = await save({ name: "replace me", mapping: { ...mapping, roles: { customer: "user", bot: "system" } } });
    expect(second.status).toBe(200);
    expect(second.json.id).toBe(first.json.id);
    const named = (await list()).json.filter((m: { name: string }) => m.name === "replace me");
    expect(named).toEqual([expect.objectContaining({ id: first.json.id, mapping: { ...mapping, roles: { customer: "user", bot: "system" } } })]);
  });

  it("refuses a bad body with a 400 and stores nothing", async () => {
    const before = (await list()).json.length;
    for (const body of [{ name: "", mapping }, { name: "x" }, { name: "x", mapping: { role: "speaker" } }, { name: "x", mapping, extra: 1 }]) {
      const res = await save(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.code).toBe("bad_request");
    }
    expect((await list()).json.length).toBe(before);
  });

  it("another user's mapping id is a 404 on import and on delete, and nothing is imported or deleted", async () => {
    const saved = await save({ name: "private", mapping });
    const res = await importWith({ mapping_id: String(saved.json.id) }, "bo");
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe("not_found");
    expect((await remove(saved.json.id, "bo")).status).toBe(404);
    expect((await list()).json.map((m: { id: number }) => m.id)).toContain(saved.json.id);
  });

  it("refuses mapping together with mapping_id, and a mapping_id that is not an id, with a 400", async () => {
    const saved = await save({ name: "both", mapping });
    const both = await importWith({ mapping_id: String(saved.json.id), mapping: JSON.stringify(mapping) });
    expect(both.status).toBe(400);
    expect(both.json.error.message).toContain("not both");
    expect((await importWith({ mapping_id: "abc" })).status).toBe(400);
  });

  it("deletes the owner's mapping; it is then gone from the list and an import by its id is a 404", async () => {
    const saved = await save({ name: "short-lived", mapping });
    expect((await remove(saved.json.id)).status).toBe(204);
    expect((await list()).json.map((m: { id: number }) => m.id)).not.toContain(saved.json.id);
    expect((await remove(saved.json.id)).status).toBe(404);
    expect((await importWith({ mapping_id: String(saved.json.id) })).status).toBe(404);
    expect((await remove("x")).status).toBe(400);
  });
});
