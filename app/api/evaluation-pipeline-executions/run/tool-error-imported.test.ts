/**
 * A failed tool call as Claude Code and the Anthropic Messages API write it — a `tool_result` block with
 * `is_error: true` — keeps its flag through the import, so the tool_error check (which reads `is_error`) fails
 * that step through the run route; the session's other result, which did not fail, passes.
 */
import { describe, expect, it } from "vitest";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as results from "@/app/api/evaluation-pipeline-executions/[id]/results/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as nodes from "@/app/api/evaluation-pipeline-nodes/route";
import { waitForExecution } from "@/lib/runner/run";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";

type Result = { status: string; result: { value: boolean; reasoning: string } | null };

async function toolErrorVerdicts(datasetId: number): Promise<Result[]> {
  const metric = await call(nodes.POST, "POST", "/api/evaluation-pipeline-nodes", {
    body: { dataset_id: datasetId, name: "tool errors", kind: "check", evaluation_level: "step", check: { type: "tool_error", params: {} } },
  });
  expect(metric.status, metric.text).toBe(201);
  const started = await call(run.POST, "POST", "/api/evaluation-pipeline-executions/run", { body: { dataset_id: datasetId, pipeline_node_id: metric.json.id } });
  expect(started.status, started.text).toBe(202);
  await waitForExecution(started.json.id);
  return (await call(results.GET, "GET", "/x?limit=100", { params: { id: started.json.id } })).json.results as Result[];
}

const session = "7d0c2a51-0b8e-4c1a-9f3e-5a2b1c0d9e8f";
const record = (type: "user" | "assistant", uuid: string, parentUuid: string | null, message: Record<string, unknown>) =>
  JSON.stringify({ parentUuid, isSidechain: false, userType: "external", cwd: "/repo", sessionId: session, version: "2.1.0", type, message, uuid, timestamp: "2026-02-11T21:24:22.960Z" });

/** A Claude Code session: a read that fails (is_error) and one that works, each answered by a tool_result block. */
const claudeCode = [
  record("user", "u1", null, { role: "user", content: "Show me the config." }),
  record("assistant", "a1", "u1", { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/repo/config.yml" } }] }),
  record("user", "u2", "a1", { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "File does not exist.", is_error: true }] }),
  record("assistant", "a2", "u2", { id: "msg_2", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "tool_use", id: "toolu_2", name: "Read", input: { file_path: "/repo/config.yaml" } }] }),
  record("user", "u3", "a2", { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_2", content: "port: 8080" }] }),
  record("assistant", "a3", "u3", { id: "msg_3", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text: "The config sets port 8080." }] }),
].join("\n");

/** The same exchange as an Anthropic Messages request body. */
const anthropic = JSON.stringify({
  model: "claude-sonnet-4-5",
  max_tokens: 1024,
  messages: [
    { role: "user", content: "Show me the config." },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "config.yml" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "No such file." }], is_error: true }] },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_2", name: "read_file", input: { path: "config.yaml" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_2", content: "port: 8080" }] },
    { role: "assistant", content: [{ type: "text", text: "The config sets port 8080." }] },
  ],
});

describe("is_error survives the import (Claude Code, Anthropic Messages)", () => {
  for (const [name, filename, text, format] of [
    ["claude code", "session.jsonl", claudeCode, "coding_agent_session"],
    ["anthropic", "request.json", anthropic, "anthropic_messages"],
  ] as const) {
    it(`${name}: the failed call's step fails tool_error, the other passes`, async () => {
      const res = await upload(createAndImport.POST, "/api/datasets/import", { file: text, filename, fields: { name } });
      expect(res.status, res.text.slice(0, 500)).toBe(201);
      expect(res.json.format).toBe(format);
      const verdicts = await toolErrorVerdicts(res.json.dataset_id);
      expect(verdicts.map((v) => v.status)).toEqual(["completed", "completed"]);
      expect(verdicts.map((v) => v.result?.value)).toEqual([false, true]);
      expect(verdicts[0].result?.reasoning).toContain("is_error = true");
    });
  }
});
