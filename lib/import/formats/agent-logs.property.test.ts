// test-stores: no-store (it converts and checks files in memory: lib/import reaches the store only to save, which these tests never do)
/**
 * Property tests of the whole-file adapters, one per format, each generator built from the format's
 * public documentation (Claude Code session logs, Open Assistant message trees, SWE-agent `.traj`,
 * OpenHands event streams, Inspect AI eval logs, MT-Bench question + answer files): random valid
 * documents go through the import checks, and the counts and the text must come out as the
 * documents say.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkUpload, type JoinRequest } from "../index";

const enc = (text: string) => new TextEncoder().encode(text);
const check = (text: string, join?: JoinRequest) => checkUpload(enc(text), { maxBytes: 50_000_000, join });
const ok = (r: ReturnType<typeof check>) => {
  if (!r.ok) throw new Error(JSON.stringify(r.errors).slice(0, 500));
  return r;
};
/** Words, never blank and never JSON text, so each generated text is one findable value. */
const words = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ,.!?']{0,30}$/);
const storedText = (r: ReturnType<typeof ok>) => JSON.stringify(r.conversations);
const allKept = (r: ReturnType<typeof ok>, texts: string[]) => {
  const hay = storedText(r);
  return texts.every((t) => hay.includes(JSON.stringify(t).slice(1, -1)));
};
const runs = { numRuns: 25 };

describe("coding-agent session logs (Claude Code JSONL)", () => {
  const turn = fc.record({
    human: words,
    replies: fc.array(
      fc.record({ thinking: fc.option(words, { nil: undefined }), text: fc.option(words, { nil: undefined }), tools: fc.array(fc.record({ input: words, result: words }), { maxLength: 3 }) }),
      { minLength: 1, maxLength: 3 },
    ),
    noise: fc.nat({ max: 3 }),
  });
  it("one conversation; a human turn and an assistant turn per exchange; blocks as steps; noise skipped and counted; every text kept", () => {
    fc.assert(
      fc.property(fc.array(turn, { minLength: 1, maxLength: 4 }), (turns) => {
        const lines: unknown[] = [{ type: "file-history-snapshot", messageId: "x", snapshot: {} }];
        let n = 0;
        let parent: string | null = null;
        const rec = (type: string, message: unknown, extra: object = {}) => {
          const uuid = `u${n++}`;
          lines.push({ type, uuid, parentUuid: parent, sessionId: "s1", isSidechain: false, cwd: "/w", version: "2.1.0", timestamp: `2026-01-01T00:00:${String(n % 60).padStart(2, "0")}Z`, message, ...extra });
          parent = uuid;
        };
        const texts: string[] = [];
        let expectedSteps = 0;
        let progress = 0;
        turns.forEach((t, ti) => {
          rec("user", { role: "user", content: t.human });
          texts.push(t.human);
          let turnSteps = 0;
          let turnTexts = 0;
          t.replies.forEach((r, ri) => {
            const id = `msg_${ti}_${ri}`;
            const blocks: object[] = [];
            if (r.thinking) blocks.push({ type: "thinking", thinking: r.thinking, signature: "sig" });
            if (r.text) blocks.push({ type: "text", text: r.text });
            r.tools.forEach((tool, k) => blocks.push({ type: "tool_use", id: `toolu_${ti}_${ri}_${k}`, name: "Bash", input: { command: tool.input } }));
            if (!blocks.length) blocks.push({ type: "text", text: `reply ${ti} ${ri}` });
            // Streamed: one line per block, all sharing message.id.
            for (const b of blocks) rec("assistant", { id, role: "assistant", model: "claude-x", content: [b] });
            for (let p = 0; p < t.noise; p++) {
              lines.push({ type: "progress", uuid: `p${n++}`, parentUuid: parent, sessionId: "s1", data: { type: "hook_progress" } });
              progress++;
            }
            r.tools.forEach((tool, k) => rec("user", { role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${ti}_${ri}_${k}`, content: tool.result }] }, { toolUseResult: { stdout: tool.result } }));
            for (const b of blocks as Array<Record<string, string>>) texts.push(b.thinking ?? b.text ?? "");
            for (const tool of r.tools) texts.push(tool.input, tool.result);
            turnSteps += (r.thinking ? 1 : 0) + r.tools.length * 2;
            turnTexts += blocks.filter((b) => (b as { type: string }).type === "text").length;
          });
          // Text blocks are output steps only in a turn that has other steps.
          expectedSteps += turnSteps ? turnSteps + turnTexts : 0;
        });
        const r = ok(check(lines.map((l) => JSON.stringify(l)).join("\n")));
        expect(r.format).toBe("coding_agent_session");
        expect(r.counts).toEqual({ conversations: 1, messages: turns.length * 2, steps: expectedSteps });
        expect(r.records.skipped).toEqual({ "file-history-snapshot": 1, ...(progress ? { progress } : {}) });
        expect(r.notImported).toEqual([]);
        expect(allKept(r, texts.filter(Boolean))).toBe(true);
      }),
      runs,
    );
  });
});

describe("coding-agent session logs: a sub-agent inside progress records", () => {
  it("becomes a conversation of its own, its calls and results steps, the other progress lines skipped", () => {
    const progress = (inner: Record<string, unknown>) => ({
      type: "progress", uuid: `p-${String(inner.uuid)}`, sessionId: "s1", parentToolUseID: "toolu_task",
      data: { type: "agent_progress", agentId: "ag1", prompt: "Find the hook contract", message: inner },
    });
    const lines = [
      { type: "user", uuid: "u1", sessionId: "s1", message: { role: "user", content: "Look it up" } },
      { type: "assistant", uuid: "a1", parentUuid: "u1", sessionId: "s1", message: { id: "m1", role: "assistant", model: "main-model", content: [{ type: "tool_use", id: "toolu_task", name: "Task", input: { prompt: "Find the hook contract" } }] } },
      progress({ type: "user", uuid: "s-u1", message: { role: "user", content: [{ type: "text", text: "Find the hook contract" }] } }),
      progress({ type: "assistant", uuid: "s-a1", message: { id: "sm1", role: "assistant", model: "sub-model", content: [{ type: "tool_use", id: "toolu_fetch", name: "WebFetch", input: { url: "https://example.test/hooks" } }] } }),
      { type: "progress", uuid: "p-hook", sessionId: "s1", data: { type: "hook_progress" } },
      progress({ type: "user", uuid: "s-u2", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_fetch", content: "hooks print JSON" }] } }),
      { type: "user", uuid: "u2", parentUuid: "a1", sessionId: "s1", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_task", content: "The contract is JSON" }] } },
    ];
    const r = ok(check(lines.map((l) => JSON.stringify(l)).join("\n")));
    expect(r.format).toBe("coding_agent_session");
    expect(r.records.skipped).toEqual({ progress: 1 });
    const [session, sub] = r.conversations as Array<{ name: string; meta: Record<string, unknown>; messages: Array<{ role: string; steps?: Array<Record<string, unknown>> }> }>;
    expect(session.meta).toMatchObject({ models: ["main-model"] });
    expect(session.meta.sidechain).toBeUndefined();
    expect(sub.name).toBe("Sub-agent ag1 of session s1");
    expect(sub.meta).toMatchObject({ sidechain: true, agent_id: "ag1", parent_tool_use_id: "toolu_task", models: ["sub-model"] });
    expect(sub.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(JSON.stringify(sub.messages[1].steps)).toContain("hooks print JSON");
    expect(JSON.stringify(sub.messages[1].steps)).toContain("WebFetch");
  });
});

type Node = { text: string; replies: Node[] };
/** A tree from a flat list: node i (after the root) hangs under an earlier node. */
const tree: fc.Arbitrary<Node> = fc.array(fc.record({ text: words, parent: fc.nat() }), { minLength: 1, maxLength: 12 }).map((flat) => {
  const nodes: Node[] = flat.map((f) => ({ text: f.text, replies: [] }));
  flat.forEach((f, i) => {
    if (i) nodes[f.parent % i].replies.push(nodes[i]);
  });
  return nodes[0];
});

describe("message trees (Open Assistant)", () => {
  it("one conversation per root-to-leaf path, each path's messages in order, ranks in meta, every text kept", () => {
    fc.assert(
      fc.property(fc.array(tree, { minLength: 1, maxLength: 3 }), (trees) => {
        let id = 0;
        const texts: string[] = [];
        let leaves = 0;
        let pathMessages = 0;
        const toMessage = (node: Node, depth: number, parent: string | null, rank: number): object => {
          const message_id = `m${id++}`;
          texts.push(node.text);
          if (!node.replies.length) {
            leaves++;
            pathMessages += depth + 1;
          }
          return {
            message_id,
            parent_id: parent,
            text: node.text,
            role: depth % 2 ? "assistant" : "prompter",
            rank: parent ? rank : undefined,
            review_count: 3,
            emojis: { "+1": rank },
            replies: node.replies.map((r, i) => toMessage(r, depth + 1, message_id, i)),
          };
        };
        const lines = trees.map((t, i) => JSON.stringify({ message_tree_id: `t${i}`, tree_state: "ready_for_export", prompt: toMessage(t, 0, null, 0) }));
        const r = ok(check(lines.length > 1 ? lines.join("\n") : `[${lines[0]}]`));
        expect(r.format).toBe("message_tree");
        expect(r.counts.conversations).toBe(leaves);
        expect(r.counts.messages).toBe(pathMessages);
        expect(r.records.in_file).toBe(id);
        expect(r.notImported).toEqual([]);
        for (const c of r.conversations) {
          const metas = c.messages.map((m) => m.meta as Record<string, unknown>);
          metas.slice(1).forEach((m, k) => expect(m.parent_id).toBe(metas[k].message_id));
          expect((c.meta as Record<string, unknown>).message_tree_id).toMatch(/^t\d+$/);
        }
        expect(allKept(r, texts)).toBe(true);
      }),
      runs,
    );
  });
});

describe("SWE-agent trajectories stored twice", () => {
  it("imported once: one tool call and one result per action, the action on the call, nothing listed as not imported", () => {
    fc.assert(
      fc.property(words, fc.array(fc.record({ thought: words, action: words, observation: words, secs: fc.double({ min: 0, max: 10, noNaN: true }) }), { minLength: 1, maxLength: 6 }), (issue, actions) => {
        const history: object[] = [
          { role: "system", content: "You are an autonomous programmer.", agent: "main", message_type: "system_prompt" },
          { role: "user", content: issue, agent: "main", message_type: "observation" },
        ];
        actions.forEach((a, i) => {
          history.push({ role: "assistant", content: a.thought, thought: a.thought, action: a.action, agent: "main", message_type: "action", tool_calls: [{ id: `call_${i}`, type: "function", function: { name: "bash", arguments: JSON.stringify({ command: a.action }) } }] });
          history.push({ role: "tool", content: a.observation, agent: "main", message_type: "observation", tool_call_ids: [`call_${i}`] });
        });
        const trajectory = actions.map((a) => ({ action: a.action, observation: a.observation, response: a.thought, thought: a.thought, execution_time: a.secs, state: { working_dir: "/testbed" } }));
        const r = ok(check(JSON.stringify({ environment: "main", trajectory, history, info: { exit_status: "submitted" } })));
        expect(r.format).toBe("swe_agent_trajectory");
        const steps = r.conversations[0].messages.flatMap((m) => m.steps);
        expect(steps.filter((s) => s.toolCall)).toHaveLength(actions.length);
        expect(steps.filter((s) => s.toolResult !== null)).toHaveLength(actions.length);
        expect(steps.filter((s) => s.toolCall).map((s) => (s.toolCall as { action: string }).action)).toEqual(actions.map((a) => a.action));
        expect(steps.filter((s) => s.toolCall).every((s) => s.agentName === "main")).toBe(true);
        expect(r.notImported).toEqual([]);
        expect((r.conversations[0].meta as Record<string, unknown[]>).trajectory_steps).toHaveLength(actions.length);
      }),
      runs,
    );
  });
});

describe("agent event streams (OpenHands)", () => {
  it("one conversation; each action a thinking + tool call step, its observation the result; outcome in meta", () => {
    fc.assert(
      fc.property(words, fc.array(fc.record({ thought: words, command: words, output: words }), { minLength: 1, maxLength: 5 }), fc.constantFrom("finished", "error"), (task, acts, state) => {
        let id = 0;
        const events: object[] = [{ id: id++, source: "user", message: task, action: "message", args: { content: task } }];
        for (const a of acts) {
          const actionId = id++;
          events.push({ id: actionId, source: "agent", message: `Running ${a.command}`, action: "run", tool_call_metadata: { function_name: "execute_bash", tool_call_id: `t${actionId}` }, args: { command: a.command, thought: a.thought } });
          events.push({ id: id++, source: "agent", message: `ran ${a.command}`, cause: actionId, observation: "run", content: a.output, extras: {} });
        }
        events.push({ id: id++, source: "environment", message: "", observation: "agent_state_changed", content: "", extras: { agent_state: state } });
        const r = ok(check(JSON.stringify(events)));
        expect(r.format).toBe("agent_events");
        expect(r.counts).toEqual({ conversations: 1, messages: 2, steps: acts.length * 3 });
        expect((r.conversations[0].meta as { outcome: { agent_state: string } }).outcome.agent_state).toBe(state);
        expect(r.records.skipped).toEqual({ agent_state_changed: 1 });
        expect(allKept(r, [task, ...acts.flatMap((a) => [a.thought, a.command, a.output])])).toBe(true);
      }),
      runs,
    );
  });
});

describe("eval logs holding samples (Inspect AI)", () => {
  it("one conversation per sample; tool calls with a function name and object arguments become steps; input, target and scores in meta", () => {
    fc.assert(
      fc.property(fc.array(fc.record({ input: words, target: words, call: fc.option(fc.record({ arg: words, result: words }), { nil: undefined }), answer: words, score: fc.constantFrom("C", "I") }), { minLength: 1, maxLength: 4 }), (samples) => {
        const log = {
          version: 2,
          status: "success",
          eval: { task: "t", model: "m" },
          samples: samples.map((s, i) => ({
            id: i + 1,
            epoch: 1,
            input: s.input,
            target: s.target,
            messages: [
              { role: "user", content: s.input, source: "input" },
              ...(s.call
                ? [
                    { role: "assistant", content: "", tool_calls: [{ id: `c${i}`, function: "lookup", arguments: { q: s.call.arg }, type: "function" }] },
                    { role: "tool", content: s.call.result, tool_call_id: `c${i}`, function: "lookup" },
                  ]
                : []),
              { role: "assistant", content: s.answer },
            ],
            scores: { match: { value: s.score, answer: s.answer } },
          })),
        };
        const r = ok(check(JSON.stringify(log)));
        expect(r.format).toBe("eval_log");
        expect(r.counts.conversations).toBe(samples.length);
        expect(r.counts.messages).toBe(samples.length * 2);
        expect(r.counts.steps).toBe(samples.reduce((n, s) => n + (s.call ? 3 : 0), 0));
        r.conversations.forEach((c, i) => {
          expect(c.meta).toMatchObject({ target: samples[i].target, scores: { match: { value: samples[i].score } } });
          const call = c.messages[1].steps.find((s) => s.toolCall)?.toolCall;
          if (samples[i].call) expect(call).toEqual({ name: "lookup", arguments: { q: samples[i].call?.arg }, id: `c${i}` });
        });
        expect(r.notImported).toEqual([]);
      }),
      runs,
    );
  });
});

describe("two files joined on a key (MT-Bench questions + model answers)", () => {
  it("one conversation per key, user turns from the questions file and assistant turns from the answers, alternating", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat({ max: 1000 }), { minLength: 1, maxLength: 6 }), fc.array(words, { minLength: 1, maxLength: 3 }), (ids, turns) => {
        const questions = ids.map((id) => JSON.stringify({ question_id: id, category: "writing", turns: turns.map((t) => `Q${id} ${t}`) })).join("\n");
        const answers = [...ids].reverse().map((id) => JSON.stringify({ question_id: id, model_id: "m", choices: [{ index: 0, turns: turns.map((t) => `A${id} ${t}`) }] })).join("\n");
        const join: JoinRequest = { key: "question_id", files: [{ name: "question.jsonl", bytes: enc(questions) }, { name: "m.jsonl", bytes: enc(answers) }] };
        const r = ok(check(questions, join));
        expect(r.format).toBe("joined_files");
        expect(r.counts).toEqual({ conversations: ids.length, messages: ids.length * turns.length * 2, steps: 0 });
        r.conversations.forEach((c) => {
          const id = (c.meta as { question_id: number }).question_id;
          expect(c.messages.map((m) => m.content)).toEqual(turns.flatMap((t) => [`Q${id} ${t}`, `A${id} ${t}`]));
          expect(c.messages.map((m) => m.role)).toEqual(turns.flatMap(() => ["user", "assistant"]));
        });
        expect(r.notImported).toEqual([]);
      }),
      runs,
    );
  });
});
