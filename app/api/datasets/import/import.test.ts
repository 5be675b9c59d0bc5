import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { countTable } from "@/lib/testing/seed/rows";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "./route";
import * as importInto from "../[id]/import/route";
import * as datasets from "../route";
import * as conversationsRoute from "../[id]/conversations/route";
import * as conversationRoute from "../../conversations/[id]/route";

const fixture = (name: string) => fs.readFileSync(path.join(process.cwd(), "e2e/fixtures", name), "utf8");

async function counts() {
  return { datasets: await countTable("datasets"), conversations: await countTable("conversations"), messages: await countTable("messages"), steps: await countTable("steps") };
}

async function newDataset(name = "target") {
  const res = await call(datasets.POST, "POST", "/api/datasets", { body: { name } });
  return res.json.id as number;
}

const intoDataset = (id: number, file: string | Uint8Array | undefined, fields: Record<string, string> = {}) =>
  upload(importInto.POST, `/api/datasets/${id}/import`, { file, fields, params: { id } });

const createWith = (file: string | Uint8Array | undefined, fields: Record<string, string> = { name: "imported" }) =>
  upload(createAndImport.POST, "/api/datasets/import", { file, fields });

afterEach(() => {
  delete process.env.MAX_IMPORT_BYTES;
  resetConfig();
});

describe("POST /api/datasets/{id}/import with the sample dataset", () => {
  it("imports every conversation, message and step, in file order, with meta and agents as given", async () => {
    const id = await newDataset();
    const res = await intoDataset(id, fixture("sample-dataset.json"));
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      success: true,
      dataset_id: id,
      format: "turnscope",
      conversations_imported: 5,
      messages_imported: 19,
      steps_imported: 21,
      errors: [],
    });
    expect(res.json.dataset).toBeUndefined();
    expect(res.json.warnings.map((w: { path: string }) => w.path)).toEqual([
      "conversations[1].messages[1].steps[1].tool_call.arguments.flight_id",
    ]);

    const sample = JSON.parse(fixture("sample-dataset.json"));
    const list = await call(conversationsRoute.GET, "GET", `/api/datasets/${id}/conversations`, { params: { id } });
    expect(list.json.map((c: { name: string }) => c.name)).toEqual(sample.conversations.map((c: { name: string }) => c.name));
    expect(list.json.map((c: { position: number }) => c.position)).toEqual([0, 1, 2, 3, 4]);

    const first = await call(conversationRoute.GET, "GET", `/api/conversations/${list.json[0].id}`, { params: { id: list.json[0].id } });
    const given = sample.conversations[0];
    expect(first.json.meta).toEqual(given.meta);
    expect(first.json.agents).toEqual(given.agents);
    expect(first.json.messages.map((m: { role: string }) => m.role)).toEqual(given.messages.map((m: { role: string }) => m.role));
    const assistant = first.json.messages[2];
    expect(assistant.meta).toEqual(given.messages[2].meta);
    expect(assistant.steps.map((s: { position: number }) => s.position)).toEqual([0, 1, 2, 3]);
    expect(assistant.steps[1].tool_call).toEqual(given.messages[2].steps[1].tool_call);
    expect(assistant.steps[2].tool_result).toEqual(given.messages[2].steps[2].tool_result);
    expect(assistant.steps[0].thinking).toBe(given.messages[2].steps[0].thinking);
  });

  it("continues positions when a second file is imported into the same dataset", async () => {
    const id = await newDataset();
    await intoDataset(id, fixture("sample-dataset.json"));
    const res = await intoDataset(id, fixture("sample-dataset.json"));
    expect(res.status).toBe(200);
    const list = await call(conversationsRoute.GET, "GET", `/api/datasets/${id}/conversations?limit=20`, { params: { id } });
    expect(list.json.map((c: { position: number }) => c.position)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

describe("POST /api/datasets/import (create and import)", () => {
  it("creates the dataset and imports into it: 201 with the dataset", async () => {
    const res = await createWith(fixture("sample-dataset.json"), { name: "Travel", description: "from the sample", user_id: "ana" });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ success: true, conversations_imported: 5, messages_imported: 19, steps_imported: 21 });
    expect(res.json.dataset).toMatchObject({ id: res.json.dataset_id, name: "Travel", description: "from the sample", user_id: "ana", conversation_count: 5, message_count: 19, step_count: 21 });
  });

  it("names the caller as owner when user_id is not given", async () => {
    const res = await upload(createAndImport.POST, "/api/datasets/import", {
      file: fixture("sample-dataset.json"),
      fields: { name: "mine" },
      headers: { "x-user-id": "bo" },
    });
    expect(res.json.dataset.user_id).toBe("bo");
  });

  it.each([
    ["invalid-syntax.json", 400],
    ["invalid-roles.json", 422],
    ["invalid-missing-role.json", 422],
    ["invalid-no-conversations.json", 422],
    ["invalid-empty-step.json", 422],
  ])("creates no dataset and writes nothing for %s (%i)", async (name, status) => {
    const before = await counts();
    const res = await createWith(fixture(name));
    expect(res.status).toBe(status);
    expect(res.json.success).toBe(false);
    expect(await counts()).toEqual(before);
  });

  it("answers a bad name with the generic 400 shape and creates nothing", async () => {
    const before = await counts();
    const res = await createWith(fixture("sample-dataset.json"), { name: "  " });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: "bad_request", details: [{ path: "name" }] });
    expect(await counts()).toEqual(before);
  });
});

describe("invalid fixtures", () => {
  it("invalid-syntax.json: 400, Invalid JSON with line and column", async () => {
    const id = await newDataset();
    const res = await intoDataset(id, fixture("invalid-syntax.json"), { get_feedback: "false" });
    expect(res.status).toBe(400);
    expect(res.json.llm_feedback).toBeUndefined();
    expect(res.json.errors).toEqual([
      {
        path: "(file)",
        message: "Invalid JSON: Trailing comma before ']' at line 1, column 71",
        suggestion: "Remove the comma before ']'",
        line: 1,
        column: 71,
      },
    ]);
  });

  it("invalid-roles.json: every bad role with its alias, and a role mapping", async () => {
    const id = await newDataset();
    const res = await intoDataset(id, fixture("invalid-roles.json"));
    expect(res.status).toBe(422);
    expect(res.json.errors).toEqual([
      { path: "conversations[0].messages[0,2].role", message: "2 messages: Invalid role value: 'human'", suggestion: "Use 'user' instead of 'human'", count: 2 },
      { path: "conversations[0].messages[1,3].role", message: "2 messages: Invalid role value: 'bot'", suggestion: "Use 'assistant' instead of 'bot'", count: 2 },
    ]);
    expect(res.json.llm_feedback).toMatchObject({
      generated_by: "rules",
      suggested_transformation: {
        from: "conversations[].messages[].role",
        to: "conversations[].messages[].role",
        mapping: { human: "user", bot: "assistant" },
      },
    });
    expect(res.json.llm_feedback.analysis).toContain("'bot' → 'assistant'");
  });

  it("invalid-missing-role.json: both missing roles, the allowed roles, and speaker → role", async () => {
    const id = await newDataset();
    const res = await intoDataset(id, fixture("invalid-missing-role.json"));
    expect(res.status).toBe(422);
    expect(res.json.errors).toEqual([
      {
        path: "conversations[0].messages[1].role",
        message: "Missing required field 'role'",
        suggestion: "Add 'role' with one of: user, assistant, system, tool",
      },
      {
        path: "conversations[1].messages[0].role",
        message: "Missing required field 'role'",
        suggestion: "Rename 'speaker' to 'role'; allowed roles: user, assistant, system, tool",
      },
    ]);
    expect(res.json.llm_feedback.suggested_transformation).toEqual({
      from: "conversations[].messages[].speaker",
      to: "conversations[].messages[].role",
      mapping: {},
    });
  });

  it("invalid-no-conversations.json: missing conversations, dialogs → conversations", async () => {
    const id = await newDataset();
    const res = await intoDataset(id, fixture("invalid-no-conversations.json"));
    expect(res.status).toBe(422);
    expect(res.json.errors).toEqual([
      { path: "conversations", message: "Missing required field 'conversations'", suggestion: "Rename 'dialogs' to 'conversations'" },
    ]);
    expect(res.json.llm_feedback).toMatchObject({
      generated_by: "rules",
      suggested_transformation: { from: "dialogs", to: "conversations", mapping: {} },
    });
  });

  it("invalid-empty-step.json: the step rule with its path", async () => {
    const id = await newDataset();
    const res = await intoDataset(id, fixture("invalid-empty-step.json"));
    expect(res.status).toBe(422);
    expect(res.json.errors).toEqual([
      {
        path: "conversations[0].messages[1].steps[0]",
        message: "Step has none of thinking, tool_call, tool_result, output_content",
        suggestion: "Give the step at least one of thinking, tool_call, tool_result, output_content, or remove it",
      },
    ]);
    expect(res.json.llm_feedback.suggested_transformation).toBeNull();
  });

  it("writes nothing for any invalid fixture", async () => {
    const id = await newDataset();
    const before = await counts();
    for (const name of ["invalid-syntax.json", "invalid-roles.json", "invalid-missing-role.json", "invalid-no-conversations.json", "invalid-empty-step.json"]) {
      const res = await intoDataset(id, fixture(name));
      expect(res.json.success).toBe(false);
    }
    expect(await counts()).toEqual(before);
  });
});

describe("request errors use the generic error shape", () => {
  it("404 for an unknown dataset", async () => {
    const res = await intoDataset(999999, fixture("sample-dataset.json"));
    expect(res.status).toBe(404);
    expect(res.json.error).toMatchObject({ code: "not_found", message: "Dataset 999999 does not exist" });
  });

  it("400 for a form without a file", async () => {
    const id = await newDataset();
    const res = await intoDataset(id, undefined, { get_feedback: "true" });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: "bad_request", details: [{ path: "file" }] });
  });

  it("400 for a body that is not multipart", async () => {
    const id = await newDataset();
    const res = await call(importInto.POST, "POST", `/api/datasets/${id}/import`, { body: { conversations: [] }, params: { id } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("bad_request");
  });

  it("400 for get_feedback that is not a boolean", async () => {
    const id = await newDataset();
    const res = await intoDataset(id, fixture("sample-dataset.json"), { get_feedback: "maybe" });
    expect(res.status).toBe(400);
    expect(res.json.error.details).toEqual([{ path: "get_feedback", message: "must be true or false" }]);
  });

  it("400 for a bad dataset id", async () => {
    const res = await upload(importInto.POST, "/api/datasets/abc/import", { file: "{}", params: { id: "abc" } });
    expect(res.status).toBe(400);
  });
});

describe("size limit", () => {
  it("413 with the import shape when the file is over MAX_IMPORT_BYTES, and nothing written", async () => {
    process.env.MAX_IMPORT_BYTES = "2000";
    resetConfig();
    const id = await newDataset();
    const before = await counts();
    const res = await intoDataset(id, fixture("sample-dataset.json"));
    expect(res.status).toBe(413);
    expect(res.json).toMatchObject({ success: false, warnings: [] });
    // In process a FormData body has no Content-Length, so the size is known only as "over the limit".
    expect(res.json.errors[0]).toMatchObject({ path: "(file)", message: "File too large: the upload exceeds 2.0 KB" });
    expect(await counts()).toEqual(before);
  });

  it("refuses from Content-Length before reading the body", async () => {
    process.env.MAX_IMPORT_BYTES = "1000";
    resetConfig();
    const id = await newDataset();
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const req = new Request(`http://localhost/api/datasets/${id}/import`, {
      method: "POST",
      body,
      headers: { "content-type": "multipart/form-data; boundary=x", "content-length": String(5 * 1024 * 1024) },
      duplex: "half",
    } as RequestInit);
    const res = await importInto.POST(req, { params: Promise.resolve({ id: String(id) }) });
    expect(res.status).toBe(413);
    expect((await res.json()).errors[0].message).toBe("File too large: 5.0 MB exceeds 1000 B");
    expect(pulled).toBeLessThanOrEqual(1);
  });

  it("stops reading a streamed upload without Content-Length once it passes the limit", async () => {
    process.env.MAX_IMPORT_BYTES = "100000";
    resetConfig();
    const id = await newDataset();
    const encoder = new TextEncoder();
    let sent = 0;
    const head = encoder.encode('--x\r\nContent-Disposition: form-data; name="file"; filename="big.json"\r\nContent-Type: application/json\r\n\r\n');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(head);
      },
      pull(controller) {
        sent += 16 * 1024;
        controller.enqueue(new Uint8Array(16 * 1024).fill(0x20));
      },
    });
    const req = new Request(`http://localhost/api/datasets/${id}/import`, {
      method: "POST",
      body,
      headers: { "content-type": "multipart/form-data; boundary=x" },
      duplex: "half",
    } as RequestInit);
    const res = await importInto.POST(req, { params: Promise.resolve({ id: String(id) }) });
    expect(res.status).toBe(413);
    expect((await res.json()).errors[0].message).toBe("File too large: the upload exceeds 97.7 KB");
    expect(sent).toBeLessThan(1024 * 1024);
  });
});
