import { describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { insertConversationFixture } from "@/lib/testing/seed/rows";
import * as collection from "./route";
import * as item from "./[id]/route";
import * as conversations from "./[id]/conversations/route";
import * as conversation from "../conversations/[id]/route";

const datasetKeys = [
  "conversation_count",
  "created_at",
  "description",
  "id",
  "message_count",
  "name",
  "step_count",
  "updated_at",
  "user_id",
];

async function create(body: unknown, headers?: Record<string, string>) {
  return call(collection.POST, "POST", "/api/datasets", { body, headers });
}

describe("POST /api/datasets", () => {
  it("creates a dataset with the Dataset shape of API.md", async () => {
    const res = await create({ name: "Support bot", description: "week 47" });
    expect(res.status).toBe(201);
    expect(Object.keys(res.json).sort()).toEqual(datasetKeys);
    expect(res.json).toMatchObject({
      name: "Support bot",
      description: "week 47",
      user_id: "default",
      conversation_count: 0,
      message_count: 0,
      step_count: 0,
    });
    expect(res.json.id).toBeTypeOf("number");
    expect(res.json.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const fetched = await call(item.GET, "GET", `/api/datasets/${res.json.id}`, { params: { id: res.json.id } });
    expect(fetched.json).toEqual(res.json);
  });

  it("takes the user from user_id, else X-User-Id, else default", async () => {
    expect((await create({ name: "a", user_id: "alice" })).json.user_id).toBe("alice");
    expect((await create({ name: "b" }, { "x-user-id": "bob" })).json.user_id).toBe("bob");
  });

  it.each([
    [{}, "name"],
    [{ name: "" }, "name"],
    [{ name: "   " }, "name"],
    [{ name: 42 }, "name"],
    [{ name: "x", description: 7 }, "description"],
    [{ name: "x".repeat(201) }, "name"],
  ])("rejects %j with 400 naming the field", async (body, field) => {
    const before = (await call(collection.GET, "GET", "/api/datasets")).headers.get("x-total-count");
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("bad_request");
    expect(res.json.error.details.map((d: { path: string }) => d.path)).toContain(field);
    const after = (await call(collection.GET, "GET", "/api/datasets")).headers.get("x-total-count");
    expect(after).toBe(before);
  });

  it("rejects a body that is not JSON, or not an object, with 400", async () => {
    const bad = await call(collection.POST, "POST", "/api/datasets", {
      rawBody: '{"name": "x",',
      headers: { "content-type": "application/json" },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/not valid JSON/);
    const empty = await call(collection.POST, "POST", "/api/datasets", { rawBody: "" });
    expect(empty.status).toBe(400);
    const array = await create([1, 2]);
    expect(array.status).toBe(400);
  });
});

describe("GET /api/datasets", () => {
  it("pages newest first with X-Total-Count", async () => {
    const user = `pager-${Date.now()}`;
    for (const name of ["one", "two", "three"]) await create({ name, user_id: user });
    const first = await call(collection.GET, "GET", `/api/datasets?user_id=${user}&limit=2`);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-total-count")).toBe("3");
    expect(first.json.map((d: { name: string }) => d.name)).toEqual(["three", "two"]);
    const second = await call(collection.GET, "GET", `/api/datasets?user_id=${user}&limit=2&offset=2`);
    expect(second.json.map((d: { name: string }) => d.name)).toEqual(["one"]);
  });

  it("finds datasets by a part of their name in any case, % and _ taken literally", async () => {
    const user = `finder-${Date.now()}`;
    for (const name of ["Refund Bot", "refunds 50%", "billing_v2", "billingXv2"]) await create({ name, user_id: user });
    const names = async (q: string) => {
      const res = await call(collection.GET, "GET", `/api/datasets?user_id=${user}&${q}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-total-count")).toBe(String(res.json.length));
      return res.json.map((d: { name: string }) => d.name);
    };
    expect(await names("name=REFUND")).toEqual(["refunds 50%", "Refund Bot"]);
    expect(await names("name=50%25")).toEqual(["refunds 50%"]);
    expect(await names("name=g_v")).toEqual(["billing_v2"]);
    expect(await names("name=nothing")).toEqual([]);
    const empty = await call(collection.GET, "GET", "/api/datasets?name=%20");
    expect(empty.status).toBe(400);
    expect(empty.json.error.details[0].path).toBe("name");
  });

  it.each(["limit=0", "limit=501", "limit=abc", "limit=-1", "offset=-5", "offset=1.5", "limit=99999999999999999999"])(
    "rejects %s with 400",
    async (q) => {
      const res = await call(collection.GET, "GET", `/api/datasets?${q}`);
      expect(res.status).toBe(400);
      expect(res.json.error.details[0].path).toBe(q.split("=")[0]);
    },
  );
});

describe("/api/datasets/{id}", () => {
  it("patches name and description and bumps updated_at", async () => {
    const { json: ds } = await create({ name: "before", description: "d" });
    await new Promise((r) => setTimeout(r, 5));
    const res = await call(item.PATCH, "PATCH", `/api/datasets/${ds.id}`, {
      params: { id: ds.id },
      body: { name: "after", description: null },
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: ds.id, name: "after", description: null });
    expect(res.json.updated_at > ds.updated_at).toBe(true);
  });

  it("rejects an empty patch and a bad name with 400, changing nothing", async () => {
    const { json: ds } = await create({ name: "keep" });
    for (const body of [{}, { name: "" }, { name: null }]) {
      const res = await call(item.PATCH, "PATCH", `/api/datasets/${ds.id}`, { params: { id: ds.id }, body });
      expect(res.status).toBe(400);
    }
    const after = await call(item.GET, "GET", `/api/datasets/${ds.id}`, { params: { id: ds.id } });
    expect(after.json.name).toBe("keep");
  });

  it("answers 404 for unknown ids and 400 for ids that are not positive integers", async () => {
    for (const handler of [item.GET, item.PATCH, item.DELETE] as const) {
      const res = await call(handler, "PATCH", "/api/datasets/999999", { params: { id: 999999 }, body: { name: "x" } });
      expect(res.status).toBe(404);
      expect(res.json.error).toEqual({ code: "not_found", message: "Dataset 999999 does not exist", details: [] });
    }
    for (const id of ["abc", "-1", "0", "1.5", "1e3", "99999999999999999999"]) {
      const res = await call(item.GET, "GET", `/api/datasets/${id}`, { params: { id } });
      expect(res.status, id).toBe(400);
      expect(res.json.error.details[0].path).toBe("id");
    }
  });

  it("deletes a dataset with its conversations, messages and steps", async () => {
    const { json: ds } = await create({ name: "doomed" });
    const conv = await insertConversationFixture(ds.id);
    const counts = await call(item.GET, "GET", `/api/datasets/${ds.id}`, { params: { id: ds.id } });
    expect(counts.json).toMatchObject({ conversation_count: 1, message_count: 3, step_count: 2 });

    const del = await call(item.DELETE, "DELETE", `/api/datasets/${ds.id}`, { params: { id: ds.id } });
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect((await call(item.GET, "GET", `/api/datasets/${ds.id}`, { params: { id: ds.id } })).status).toBe(404);
    const gone = await call(conversation.GET, "GET", `/api/conversations/${conv.conversationId}`, {
      params: { id: conv.conversationId },
    });
    expect(gone.status).toBe(404);
    expect(await conv.countRows()).toEqual({ conversations: 0, messages: 0, steps: 0 });
  });
});

describe("conversations", () => {
  it("lists a dataset's conversations in position order with counts", async () => {
    const { json: ds } = await create({ name: "convs" });
    await insertConversationFixture(ds.id, { position: 1, name: "second" });
    await insertConversationFixture(ds.id, { position: 0, name: "first" });
    const res = await call(conversations.GET, "GET", `/api/datasets/${ds.id}/conversations?limit=10`, {
      params: { id: ds.id },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-total-count")).toBe("2");
    expect(res.json.map((c: { name: string }) => c.name)).toEqual(["first", "second"]);
    expect(Object.keys(res.json[0]).sort()).toEqual(
      ["created_at", "dataset_id", "description", "id", "label", "message_count", "meta", "name", "position", "step_count"].sort(),
    );
    expect(res.json[0]).toMatchObject({ position: 0, message_count: 3, step_count: 2, meta: { channel: "web", n: [1, 2] } });
    const missing = await call(conversations.GET, "GET", "/api/datasets/999999/conversations", { params: { id: 999999 } });
    expect(missing.status).toBe(404);
  });

  it("names each conversation as every page does (label), and lists only the ids asked for", async () => {
    const { json: ds } = await create({ name: "labels" });
    const { json: other } = await create({ name: "labels, another dataset" });
    const named = await insertConversationFixture(ds.id, { position: 0, name: "refund call" });
    const nameless = await insertConversationFixture(ds.id, { position: 1, name: "  " });
    const elsewhere = await insertConversationFixture(other.id, { position: 0, name: "not here" });
    const list = await call(conversations.GET, "GET", `/api/datasets/${ds.id}/conversations`, { params: { id: ds.id } });
    // A nameless conversation with no meta id is called by its first user message's words.
    expect(list.json.map((c: { label: string }) => c.label)).toEqual(["refund call", "find x"]);
    const one = await call(conversation.GET, "GET", `/api/conversations/${nameless.conversationId}`, { params: { id: nameless.conversationId } });
    expect(one.json.label).toBe("find x");

    const some = await call(conversations.GET, "GET", `/api/datasets/${ds.id}/conversations?ids=${nameless.conversationId},${elsewhere.conversationId}`, { params: { id: ds.id } });
    expect(some.status).toBe(200);
    expect(some.json.map((c: { id: number }) => c.id)).toEqual([nameless.conversationId]);
    expect(some.headers.get("x-total-count")).toBe("1");
    expect(named.conversationId).toBeGreaterThan(0);

    const bad = await call(conversations.GET, "GET", `/api/datasets/${ds.id}/conversations?ids=1,x`, { params: { id: ds.id } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain("ids");
  });

  it("finds a dataset's conversations by a part of their name, in any case", async () => {
    const { json: ds } = await create({ name: "named conversations" });
    await insertConversationFixture(ds.id, { position: 0, name: "Refund call" });
    await insertConversationFixture(ds.id, { position: 1, name: "booking" });
    await insertConversationFixture(ds.id, { position: 2, name: "late refund" });
    const res = await call(conversations.GET, "GET", `/api/datasets/${ds.id}/conversations?name=refund`, { params: { id: ds.id } });
    expect(res.status).toBe(200);
    expect(res.json.map((c: { name: string }) => c.name)).toEqual(["Refund call", "late refund"]);
    expect(res.headers.get("x-total-count")).toBe("2");
  });

  it("returns one conversation with messages and steps, meta exactly as stored", async () => {
    const { json: ds } = await create({ name: "tree" });
    const { conversationId } = await insertConversationFixture(ds.id);
    const res = await call(conversation.GET, "GET", `/api/conversations/${conversationId}`, {
      params: { id: conversationId },
    });
    expect(res.status).toBe(200);
    expect(res.json.agents).toEqual([{ name: "agent", tools: { lookup: { parameters: { q: "string" } } } }]);
    expect(res.json.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user"]);
    const assistant = res.json.messages[1];
    expect(assistant.meta).toEqual({ latency_ms: 12, nested: { ok: true } });
    expect(assistant.steps).toHaveLength(2);
    expect(assistant.steps[0]).toMatchObject({ position: 0, tool_call: { name: "lookup", arguments: { q: "x" } } });
    expect(assistant.steps[1]).toMatchObject({ position: 1, output_content: "done", agent_name: "agent" });
    expect(res.json.messages[0].steps).toEqual([]);
  });
});
