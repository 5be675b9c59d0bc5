/**
 * Version 2 mappings sent with an upload (the `mapping` form field): messages written as arrays are read by
 * position paths (`[0]`, `[1]`), and a mapping that reads none of a conversation's messages is refused with a
 * 422 naming the conversation and why, never imported as conversations of zero messages.
 */
import { describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "./route";
import * as conversationsRoute from "../[id]/conversations/route";
import * as conversationRoute from "../../conversations/[id]/route";
import * as datasetsRoute from "../route";

const importWith = (file: unknown, mapping: unknown, name = "arrays") =>
  upload(createAndImport.POST, "/api/datasets/import", { file: JSON.stringify(file), filename: "log.json", fields: { name, mapping: JSON.stringify(mapping) } });

async function messagesOf(datasetId: number) {
  const list = await call(conversationsRoute.GET, "GET", `/api/datasets/${datasetId}/conversations`, { params: { id: datasetId } });
  const out: Array<{ name: string | null; messages: Array<[string, string | null]> }> = [];
  for (const c of list.json as Array<{ id: number }>) {
    const conv = (await call(conversationRoute.GET, "GET", `/api/conversations/${c.id}`, { params: { id: c.id } })).json;
    out.push({ name: conv.name, messages: conv.messages.map((m: { role: string; content: string | null }) => [m.role, m.content]) });
  }
  return out;
}

const datasetNames = async () => ((await call(datasetsRoute.GET, "GET", "/api/datasets")).json as Array<{ name: string }>).map((d) => d.name);

describe("version 2 mappings: messages that are arrays", () => {
  it("reads each message by its positions: [0] the speaker, [1] the text", async () => {
    const file = [
      { id: "s1", log: [["C", "hi"], ["A", "hello"]] },
      { id: "s2", log: [["C", "what time is it?"], ["A", "noon"], ["C", "thanks"]] },
    ];
    const res = await importWith(file, { version: 2, conversations: { from: "records", messages: "log" }, message: { role: "[0]", roles: { C: "user", A: "assistant" }, content: "[1]" }, name: "id" });
    expect(res.status, res.text).toBe(201);
    expect(res.json.conversations_imported).toBe(2);
    expect(await messagesOf(res.json.dataset_id)).toEqual([
      { name: "s1", messages: [["user", "hi"], ["assistant", "hello"]] },
      { name: "s2", messages: [["user", "what time is it?"], ["assistant", "noon"], ["user", "thanks"]] },
    ]);
  });

  it("a mapping that reads none of a conversation's messages is a 422 naming it, and nothing is stored", async () => {
    // Every message read as an empty assistant turn (the text is at [1], not [2]): none is kept.
    const file = [{ id: "s1", log: [["A", "hi"], ["A", "hello"]] }];
    const res = await importWith(file, { version: 2, conversations: { from: "records", messages: "log" }, message: { role_value: "assistant", content: "[2]" } }, "nothing-read");
    expect(res.status, res.text).toBe(422);
    const error = res.json.errors.find((e: { path: string }) => e.path.includes("log"));
    expect(error?.message).toMatch(/none of its 2 messages/);
    expect(await datasetNames()).not.toContain("nothing-read");
  });
});
