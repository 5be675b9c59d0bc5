// test-stores: no-store (it converts and checks files in memory: lib/import reaches the store only to save, which these tests never do)
/**
 * Codex CLI session rollouts. Built against the stored session published in jnarowski/agentcmd
 * `.agent/research/codex/format-comparison.md` (commit d008622, Codex CLI 0.46.0: `session_meta`, `response_item`
 * messages / `reasoning` / `function_call` with arguments as JSON text / `function_call_output` whose output is JSON
 * text again / `custom_tool_call`, `event_msg` copies of every prompt and answer). The fixture
 * (e2e/fixtures/formats/codex-rollout.jsonl) is a small synthetic file of that shape; a real rollout placed in
 * ../shared/realdata as codex_rollout.jsonl is read too, and skipped saying so when absent.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { jsonl, readRealdata, realdataFileAbsent, realdataHas } from "@/lib/testing/realdata/files";
import { checkUpload } from "../index";

const check = (text: string | Buffer) => {
  const r = checkUpload(new Uint8Array(Buffer.from(text)), { maxBytes: 50_000_000 });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r;
};
const fixture = fs.readFileSync(path.join(process.cwd(), "e2e/fixtures/formats/codex-rollout.jsonl"), "utf8");
type Step = { thinking: string | null; toolCall: Record<string, unknown> | null; toolResult: unknown; outputContent: string | null };

describe("Codex CLI rollouts", () => {
  it("stores each prompt and answer once, context as a system message, the IDE's wrapping in meta", () => {
    const r = check(fixture);
    expect(r.format).toBe("codex_rollout");
    const [c] = r.conversations;
    expect(c.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", expect.stringMatching(/^<environment_context>/)],
      ["user", "list the files in this directory"],
      ["assistant", "Files here: `app.js`, `README.md`; I added `hello.txt`."],
    ]);
    expect(c.messages[0].meta).toEqual({ context: true });
    expect(c.messages[1].meta).toMatchObject({ ide_context: "# Context from my IDE setup:\n\n## Active file: src/app.js" });
    expect(r.records).toMatchObject({ in_file: 14, skipped: { "event_msg/user_message": 1, "event_msg/agent_message": 1, "event_msg/agent_reasoning": 1 } });
    expect(r.notImported).toEqual([]);
  });

  it("pairs every call with its output (JSON text decoded twice), reasoning summaries as thinking, usage and model in meta", () => {
    const [c] = check(fixture).conversations;
    const steps = c.messages[2].steps as Step[];
    expect(steps.map((s) => (s.thinking ? "thinking" : s.toolCall ? `call:${String(s.toolCall.name)}` : s.toolResult !== null ? "result" : "output"))).toEqual([
      "thinking",
      "call:shell",
      "result",
      "call:apply_patch",
      "result",
      "output",
    ]);
    expect(steps[1].toolCall).toEqual({ name: "shell", id: "call_A1", arguments: { command: ["bash", "-lc", "ls"], workdir: "/tmp/demo" } });
    expect(steps[2].toolResult).toEqual({ output: "app.js\nREADME.md\n", metadata: { exit_code: 0, duration_seconds: 0.1 } });
    expect(steps[3].toolCall).toMatchObject({ name: "apply_patch", arguments: { input: expect.stringContaining("*** Add File: hello.txt") } });
    expect(c.meta).toMatchObject({ session_id: "0199aaaa-1111-7000-8000-000000000001", cli_version: "0.46.0", models: ["gpt-5-codex"], usage: { total_token_usage: { output_tokens: 129 } } });
  });

  it("keeps an event's text that no response item holds", () => {
    const lines = fixture.split("\n").filter((l) => !l.includes('"role":"assistant"'));
    const [c] = check(lines.join("\n")).conversations;
    expect(c.messages[2].content).toBe("Files here: `app.js`, `README.md`; I added `hello.txt`.");
  });

  it.skipIf(!realdataHas("codex_rollout.jsonl"))("a real rollout: every function call paired with its output, each prompt once", () => {
    const text = readRealdata("codex_rollout.jsonl");
    const lines = jsonl(text);
    const r = check(text);
    const steps = r.conversations.flatMap((c) => c.messages.flatMap((m) => m.steps as Step[]));
    const calls = lines.filter((l) => (l.payload as Record<string, unknown>)?.type?.toString().match(/^(function|custom_tool|local_shell)_call$/));
    expect(steps.filter((s) => s.toolCall)).toHaveLength(calls.length);
    const prompts = lines.filter((l) => l.type === "event_msg" && (l.payload as Record<string, unknown>).type === "user_message");
    expect(r.conversations[0].messages.filter((m) => m.role === "user")).toHaveLength(prompts.length);
  });
  if (!realdataHas("codex_rollout.jsonl")) it.skip(realdataFileAbsent("codex_rollout.jsonl"), () => {});
});
