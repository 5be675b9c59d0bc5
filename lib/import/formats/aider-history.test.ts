/**
 * Aider chat histories (Markdown). Built against the history published in AndrewJacop/Simple-Calulator
 * `.aider.chat.history.md` (commit 8424ac2: `# aider chat started at …` sessions, `#### ` prompts, a `/code` prompt
 * written again as `#### …`, `> ` output with confirmation prompts answered inline, Aider v0.82.2). The fixture
 * (e2e/fixtures/formats/aider.chat.history.md) is a small synthetic history of that shape with a `#### n` answer to
 * a yes/no question and `<thinking-content-…>` reasoning; a real history placed in ../shared/realdata as
 * aider.chat.history.md is read too, and skipped saying so when absent.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { upload } from "@/lib/testing/http/multipart";
import { readRealdata, realdataFileAbsent, realdataHas } from "@/lib/testing/realdata/files";
import * as createAndImport from "@/app/api/datasets/import/route";
import { checkUpload } from "../index";

const fixture = fs.readFileSync(path.join(process.cwd(), "e2e/fixtures/formats/aider.chat.history.md"), "utf8");
const check = (text: string) => {
  const r = checkUpload(new TextEncoder().encode(text), { maxBytes: 10_000_000 });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r;
};

describe("Aider chat histories", () => {
  it("one conversation per session; a prompt written twice is one, a confirmation answer is no prompt, reasoning is thinking", () => {
    const r = check(fixture);
    expect(r.format).toBe("aider_history");
    expect(r.conversations.map((c) => c.name)).toEqual(["Aider session 2025-05-04 17:02:36", "Aider session 2025-05-05 09:00:00"]);
    const [first] = r.conversations;
    expect(first.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      "give me a quick overview of this repo",
      "add a dark/light mode switch on the top right",
      "/commit the latest updates",
    ]);
    expect(first.messages[3].meta).toMatchObject({ command: "/code", as_typed: "/code add a dark/light mode switch on the top right" });
    expect(first.messages[1].steps).toEqual([
      expect.objectContaining({ thinking: "The user wants a summary; the repo is a small React calculator." }),
      expect.objectContaining({ outputContent: "This repository contains a simple web-based calculator built with React." }),
    ]);
    expect(r.records).toMatchObject({ skipped: { "prompt written twice": 1, "confirmation answer": 1 } });
    expect(r.notImported).toEqual([]);
  });

  it("keeps Aider's output, its questions with their answers, the model and version in meta", () => {
    const [first] = check(fixture).conversations;
    const meta = first.meta as Record<string, unknown>;
    expect(meta).toMatchObject({ started_at: "2025-05-04 17:02:36", aider_version: "v0.82.2", model: "gemini/gemini-2.5-pro with diff-fenced edit format" });
    expect(meta.confirmations).toContainEqual({ question: "Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]", answer: "n" });
    expect(first.messages[1].meta).toMatchObject({ aider_output: expect.arrayContaining(["Tokens: 3.2k sent, 222 received."]) });
  });

  it("through the API: the Markdown file imports; Markdown that is no Aider history is still refused with 400", async () => {
    const imported = await upload(createAndImport.POST, "/api/datasets/import", { file: fixture, filename: ".aider.chat.history.md", fields: { name: "aider" } });
    expect(imported.status).toBe(201);
    expect(imported.json).toMatchObject({ format: "aider_history", conversations_imported: 2 });
    const other = await upload(createAndImport.POST, "/api/datasets/import", { file: "# Notes\n\nnot a chat", filename: "notes.md", fields: { name: "notes" } });
    expect(other.status).toBe(400);
  });

  it("a question written with its answer as a `#### ` line (`… [Yes]: all`) is a confirmation, not a prompt", () => {
    const history = [
      "# aider chat started at 2025-06-01 10:00:00",
      "",
      "#### read the store",
      "",
      "The store keeps jobs by id.",
      "",
      "> Tokens: 4.1k sent, 1.3k received.  ",
      "> frontend/electron/main.ts  ",
      "> Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a  ",
      "> frontend/src/store/reducer.ts  ",
      "",
      "#### Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all  ",
      "> Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a  ",
      "",
      "Both files are in the chat now.",
      "",
      "#### thanks",
      "",
    ].join("\n");
    const r = check(history);
    const [conversation] = r.conversations;
    expect(conversation.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["read the store", "thanks"]);
    // Aider asks the model again once the files are in the chat: a second reply, no prompt between.
    expect(conversation.messages.map((m) => m.role)).toEqual(["user", "assistant", "assistant", "user"]);
    expect((conversation.meta as Record<string, unknown>).confirmations).toContainEqual({
      question: "Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]",
      answer: "all",
    });
    expect(r.records).toMatchObject({ skipped: { "confirmation answer": 1 } });
  });

  it.skipIf(!realdataHas("aider_chat_history_mozgoslav.md"))("the real mozgoslav history: 11 prompts, its ten `#### … [Yes]: all` answers are confirmations", () => {
    const r = check(readRealdata("aider_chat_history_mozgoslav.md"));
    const prompts = r.conversations.flatMap((c) => c.messages.filter((m) => m.role === "user").map((m) => m.content ?? ""));
    expect(prompts.filter((p) => /\(Y\)es\/\(N\)o/.test(p))).toEqual([]);
    expect(prompts).toHaveLength(11);
  });

  it.skipIf(!realdataHas("aider.chat.history.md"))("a real history: every session with a prompt imported, no confirmation answer counted as a prompt", () => {
    const r = check(readRealdata("aider.chat.history.md"));
    expect(r.conversations.length).toBeGreaterThan(0);
    const prompts = r.conversations.flatMap((c) => c.messages.filter((m) => m.role === "user").map((m) => m.content ?? ""));
    expect(prompts.filter((p) => /^(y|n|yes|no)$/i.test(p.trim()))).toEqual([]);
  });
  if (!realdataHas("aider.chat.history.md")) it.skip(realdataFileAbsent("aider.chat.history.md"), () => {});
});
