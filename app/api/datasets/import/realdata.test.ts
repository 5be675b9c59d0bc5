/**
 * Every real public file in ../shared/realdata (see its README.txt for sources and licences) imported as
 * it is through the create-and-import route (multipart), then read back through the conversations API:
 * the text kept, counted against the file itself (every string the file holds in its conversation
 * parts, JSON text parsed, minus values that name rather than say: roles, types, ids), tool calls and
 * results as steps, and the file's ground truth in meta. Skips, saying so, where the folder is absent.
 */
import { describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import { jsonl, readRealdata, realdataAbsentMessage, realdataPresent, sessionMessageParts, textKept, type KeptConversation } from "@/lib/testing/realdata/files";
import * as createAndImport from "./route";
import * as conversationsRoute from "../[id]/conversations/route";
import * as conversationRoute from "../../conversations/[id]/route";

if (!realdataPresent) console.warn(`realdata.test.ts: ${realdataAbsentMessage}`);
const read = readRealdata;
type Conversation = KeptConversation;

async function importFiles(files: Array<{ name: string; text: string }>, fields: Record<string, string> = {}) {
  const [first, ...more] = files;
  const res = await upload(createAndImport.POST, "/api/datasets/import", {
    file: first.text,
    filename: first.name,
    moreFiles: more.map((f) => ({ file: f.text, filename: f.name })),
    fields: { name: first.name, ...fields },
  });
  if (res.status !== 201) throw new Error(`${first.name}: ${res.status} ${res.text.slice(0, 2000)}`);
  const id = res.json.dataset_id as number;
  const list = await call(conversationsRoute.GET, "GET", `/api/datasets/${id}/conversations?limit=500`, { params: { id } });
  const total = Number(list.headers.get("x-total-count"));
  const summaries = [...(list.json as Array<{ id: number }>)];
  for (let offset = 500; offset < total; offset += 500) {
    const page = await call(conversationsRoute.GET, "GET", `/api/datasets/${id}/conversations?limit=500&offset=${offset}`, { params: { id } });
    summaries.push(...(page.json as Array<{ id: number }>));
  }
  const conversations: Conversation[] = [];
  for (const c of summaries) conversations.push((await call(conversationRoute.GET, "GET", `/api/conversations/${c.id}`, { params: { id: c.id } })).json);
  return { outcome: res.json, conversations };
}

const steps = (cs: Conversation[]) => cs.flatMap((c) => c.messages.flatMap((m) => m.steps));

describe.skipIf(!realdataPresent)("real files from ../shared/realdata import as they are, through the API", () => {
  it("tau-bench airline trajectories: OpenAI messages with tool calls, reward in meta", async () => {
    const text = read("tau-bench_gpt-4o-airline.json");
    const { outcome, conversations } = await importFiles([{ name: "tau-bench_gpt-4o-airline.json", text }]);
    expect(outcome).toMatchObject({ format: "openai_chat", conversations_imported: 200 });
    // All text is stored; only the rewards' written form is not (0.0 and 1.0 are stored as 0 and 1), and said so.
    expect(outcome.not_imported).toEqual([
      { path: "[].reward", characters: 600, reason: "re-serialised: 200 values here, e.g. 0.0 stored as 0" },
      { path: "[].info.reward_info.reward", characters: 585, reason: "re-serialised: 195 values here, e.g. 0.0 stored as 0" },
      { path: "[].info.reward_info.info.r_actions", characters: 546, reason: "re-serialised: 182 values here, e.g. 0.0 stored as 0" },
      { path: "[].info.reward_info.info.r_outputs", characters: 39, reason: "re-serialised: 13 values here, e.g. 0.0 stored as 0" },
    ]);
    expect(outcome.records.explanation).toMatch(/^5,\d{3} file messages → 200 conversations, 3,031 messages \+ 2,936 steps: /);
    expect(textKept(JSON.parse(text), conversations).ratio).toBeGreaterThanOrEqual(0.99);
    expect(steps(conversations).filter((s) => s.tool_result !== null)).toHaveLength(1164);
    expect(conversations.filter((c) => c.meta?.reward === 1)).toHaveLength(84);
  }, 120_000);

  it("LLaMA-Factory glaive tool calls (ShareGPT)", async () => {
    const text = read("llamafactory_glaive_toolcall_en_demo.json");
    const { outcome, conversations } = await importFiles([{ name: "glaive.json", text }]);
    expect(outcome).toMatchObject({ format: "sharegpt", conversations_imported: 300 });
    // Tool results arrive as JSON text and are stored parsed: their numbers' written form is listed.
    expect(outcome.not_imported).toEqual([
      { path: "[].conversations[].value.converted_amount", characters: 53, reason: "re-serialised: 9 values here, e.g. 420.50 stored as 420.5" },
      { path: "[].conversations[].value.result", characters: 12, reason: "re-serialised: 2 values here, e.g. 425.50 stored as 425.5" },
      { path: "[].conversations[].value.rating", characters: 9, reason: "re-serialised: 3 values here, e.g. 9.0 stored as 9" },
      { path: "[].conversations[].value.cost", characters: 5, reason: "re-serialised: 25.00 stored as 25" },
    ]);
    expect(textKept(JSON.parse(text), conversations).ratio).toBeGreaterThanOrEqual(0.99);
    expect(steps(conversations).filter((s) => s.tool_call)).toHaveLength(211);
    expect(steps(conversations).filter((s) => s.tool_result !== null)).toHaveLength(211);
  }, 60_000);

  it("LLaMA-Factory reason_tool_use: tool_call parts holding JSON text, reasoning parts → thinking steps", async () => {
    const text = read("llamafactory_reason_tool_use_demo_50.jsonl");
    const { outcome, conversations } = await importFiles([{ name: "reason.jsonl", text }]);
    expect(outcome).toMatchObject({ format: "content_parts", conversations_imported: 50, not_imported: [] });
    expect(textKept(jsonl(text), conversations).ratio).toBeGreaterThanOrEqual(0.99);
    const all = steps(conversations);
    expect(all.filter((s) => s.tool_call)).toHaveLength(68);
    expect(all.every((s) => !s.tool_call || (typeof s.tool_call.name === "string" && typeof s.tool_call.arguments === "object"))).toBe(true);
    expect(all.filter((s) => s.tool_result !== null)).toHaveLength(42);
    expect(all.filter((s) => s.thinking)).toHaveLength(112);
  }, 60_000);

  it("MT-Bench questions + GPT-4o answers, two files joined on question_id: user turns from one, assistant turns from the other", async () => {
    const questions = read("fastchat_mt_bench_question.jsonl");
    const answers = read("fastchat_mt_bench_model_answer_gpt-4o.jsonl");
    const { outcome, conversations } = await importFiles(
      [
        { name: "question.jsonl", text: questions },
        { name: "gpt-4o.jsonl", text: answers },
      ],
      { join_key: "question_id" },
    );
    expect(outcome).toMatchObject({ format: "joined_files", conversations_imported: 80, messages_imported: 320, steps_imported: 0, not_imported: [] });
    expect(textKept([...jsonl(questions), ...jsonl(answers)], conversations).ratio).toBeGreaterThanOrEqual(0.99);
    const first = conversations.find((c) => c.meta?.question_id === 81) as Conversation;
    expect(first.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(first.messages[0].content).toMatch(/^Compose an engaging travel blog post about a recent trip to Hawaii/);
    expect(first.messages[1].content).toMatch(/^\*\*Aloha Adventures/);
    expect(first.meta).toMatchObject({ question_id: 81, category: "writing", model_id: "gpt-4o", answer_id: "b3YzhQhc7uKpCgdEPDqHhP" });
    // The reference answers (ground truth for 39 questions) travel in meta.
    expect(conversations.filter((c) => Array.isArray(c.meta?.reference))).toHaveLength(39);
  }, 60_000);

  it("Claude Code session log: the session and its sub-agent, noise records skipped and counted, tool use/results as steps, compaction summary marked", async () => {
    const text = read("claudecode_spotter_session_258c7280.jsonl");
    const { outcome, conversations } = await importFiles([{ name: "session.jsonl", text }]);
    expect(outcome).toMatchObject({ format: "coding_agent_session", conversations_imported: 2 });
    // 1,333 progress lines: 5 hold the sub-agent's messages (agent_progress), the rest are hook and bash progress.
    expect(outcome.records).toMatchObject({ in_file: 1863, skipped: { progress: 1328, "file-history-snapshot": 28, "queue-operation": 6, "system/compact_boundary": 1 } });
    expect(outcome.records.explanation).toMatch(/^1,863 lines → 2 conversations, \d+ messages \+ \d+ steps: /);
    expect(textKept(sessionMessageParts(text), conversations).ratio).toBeGreaterThanOrEqual(0.99);
    // Only the tool's structured copy of results (toolUseResult) is listed, never the conversation's text.
    expect((outcome.not_imported as Array<{ path: string }>).every((n) => n.path.startsWith("[].toolUseResult"))).toBe(true);
    const all = steps(conversations);
    // Every tool call of the file: 186 of the session, 2 of its sub-agent (inside progress records).
    expect(all.filter((s) => s.tool_call)).toHaveLength(188);
    expect(all.filter((s) => s.tool_result !== null)).toHaveLength(188);
    expect(all.filter((s) => s.thinking)).toHaveLength(19);
    const [session, subAgent] = conversations;
    expect(subAgent.name).toBe("Sub-agent a881341 of session 258c7280");
    expect(subAgent.meta).toMatchObject({ sidechain: true, agent_id: "a881341", parent_tool_use_id: "toolu_01VmaERAwhb19LGUwu9GenaK", models: ["claude-sonnet-4-5-20250929"] });
    expect(subAgent.messages[0]).toMatchObject({ role: "user", content: expect.stringMatching(/^What is the output contract for Claude Code hooks/) });
    expect(steps([subAgent]).filter((s) => s.tool_call).map((s) => (s.tool_call as { name: string }).name)).toEqual(["WebFetch", "WebFetch"]);
    expect(session.meta).toMatchObject({ session_id: "258c7280-ae70-4798-800f-63464d01a85d", git_branch: "spotter-gqc", agent_version: "2.1.39", models: ["claude-opus-4-6"] });
    const users = session.messages.filter((m) => m.role === "user").map((m) => m.content ?? "");
    expect(users[0]).toBe("Implement spotter-gqc");
    expect(users).toContain("did you push?");
    const summary = session.messages.filter((m) => m.meta?.compaction_summary === true);
    expect(summary).toHaveLength(1);
    expect(summary[0].content).toMatch(/^This session is being continued from a previous conversation/);
    // 299 assistant lines are 152 API replies: every reply id is kept once on its turn.
    const ids = session.messages.flatMap((m) => (Array.isArray(m.meta?.message_ids) ? (m.meta.message_ids as string[]) : []));
    expect(new Set(ids).size).toBe(152);
    expect(ids).toHaveLength(152);
  }, 60_000);

  it("OASST message trees: one conversation per root-to-leaf path, ranks and votes in message meta, tree id in conversation meta", async () => {
    const text = read("oasst_en_100_tree.jsonl");
    const { outcome, conversations } = await importFiles([{ name: "oasst.jsonl", text }]);
    expect(outcome).toMatchObject({ format: "message_tree", conversations_imported: 626, not_imported: [] });
    expect(outcome.records.in_file).toBe(1167);
    expect(textKept(jsonl(text), conversations).ratio).toBeGreaterThanOrEqual(0.99);
    // Each tree message stored once without shared_prefix: 641 carry a human rank, 863 votes.
    const firsts = conversations.flatMap((c) => c.messages).filter((m) => !m.meta?.shared_prefix);
    expect(firsts).toHaveLength(1167);
    expect(firsts.filter((m) => typeof m.meta?.rank === "number")).toHaveLength(641);
    expect(firsts.filter((m) => m.meta && "emojis" in m.meta)).toHaveLength(863);
    const replies = firsts.filter((m) => m.role === "assistant");
    expect(replies).toHaveLength(687);
    expect(replies.every((m) => typeof m.meta?.parent_id === "string" && typeof m.meta?.review_count === "number")).toBe(true);
    expect(new Set(conversations.map((c) => c.meta?.message_tree_id)).size).toBe(100);
  }, 120_000);

  it("SWE-agent trajectory stored twice (history + trajectory): imported once, action text and agent kept", async () => {
    const text = read("sweagent_marshmallow-1867_function_calling.traj");
    const file = JSON.parse(text) as Record<string, unknown>;
    const { outcome, conversations } = await importFiles([{ name: "run.traj", text }]);
    expect(outcome).toMatchObject({ format: "swe_agent_trajectory", conversations_imported: 1 });
    // Nothing dropped; the run's config (JSON text, stored parsed in meta) writes some numbers as 1.0.
    expect(outcome.not_imported.length).toBeGreaterThan(0);
    for (const n of outcome.not_imported) expect(n).toMatchObject({ path: expect.stringMatching(/^replay_config\./), reason: expect.stringMatching(/^re-serialised: \d+\.0 stored as \d+$/) });
    expect(textKept(file, conversations).ratio).toBeGreaterThanOrEqual(0.99);
    const all = steps(conversations);
    const calls = all.filter((s) => s.tool_call);
    expect(calls).toHaveLength(11);
    expect(all.filter((s) => s.tool_result !== null)).toHaveLength(11);
    expect(calls[0].tool_call).toMatchObject({ name: "create", arguments: { filename: "reproduce.py" }, action: "create reproduce.py" });
    expect(calls.every((s) => s.agent_name === "main")).toBe(true);
    const meta = conversations[0].meta as Record<string, unknown>;
    expect(meta.info).toMatchObject({ exit_status: "submitted" });
    expect(meta.trajectory_steps).toHaveLength(11);
    expect(meta).not.toHaveProperty("trajectory");
  }, 60_000);
  it("OpenHands evaluation output: one run per line with its history, every action paired with its observation, outcome in meta", async () => {
    const text = read("openhands_multi_swe_bench_output.jsonl");
    const runs = jsonl(text);
    const { outcome, conversations } = await importFiles([{ name: "output.jsonl", text }]);
    expect(outcome).toMatchObject({ format: "agent_events", conversations_imported: 3 });
    expect(outcome.records).toMatchObject({ in_file: 222, skipped: { "action/recall": 3, "observation/recall answering no call": 3, "observation/error answering no call": 2 } });
    // The events' display summaries ("Running command: ls") are the only text not stored, and are listed.
    // The model response repeated on each action is its calls (stored) and `object: "chat.completion"`, which names a
    // kind; each event's timestamp says when, not what (the run's first and last are in meta).
    const drop = new Set(["object", "timestamp"]);
    const histories = JSON.parse(JSON.stringify(runs.map((r) => (r.history as Array<Record<string, unknown>>).map(({ message: _message, ...e }) => e))), (k, v: unknown) => (drop.has(k) ? undefined : v)) as unknown;
    expect(textKept(histories, conversations).ratio).toBeGreaterThanOrEqual(0.99);
    for (const [i, c] of conversations.entries()) {
      const all = c.messages.flatMap((m) => m.steps);
      const events = runs[i].history as Array<Record<string, unknown>>;
      const called = events.filter((e) => e.action && e.tool_call_metadata);
      const answered = events.filter((e) => e.observation && called.some((a) => a.id === e.cause));
      expect(all.filter((s) => s.tool_call)).toHaveLength(called.length);
      expect(all.filter((s) => s.tool_result !== null)).toHaveLength(answered.length);
      expect(c.messages.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
      expect(c.meta).toMatchObject({ instance_id: runs[i].instance_id, test_result: runs[i].test_result, started_at: events[0].timestamp, ended_at: events[events.length - 1].timestamp });
    }
    expect(conversations.map((c) => steps([c]).filter((s) => s.tool_call).length)).toEqual([23, 33, 49]);
    const failed = conversations.find((c) => c.name === "ponylang__ponyc-4588") as Conversation;
    expect(failed.meta?.outcome).toMatchObject({ error: expect.stringMatching(/^RuntimeError: Agent reached maximum iteration/) });
    expect(failed.meta?.outcome).not.toHaveProperty("finish");
    expect(conversations.filter((c) => c.meta?.outcome && "finish" in (c.meta.outcome as object))).toHaveLength(2);
    expect(conversations[0].agents).toEqual([expect.objectContaining({ tools: expect.objectContaining({ execute_bash: expect.anything() }) })]);
  }, 60_000);
});
