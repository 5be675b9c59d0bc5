// test-stores: no-store (it converts and checks files in memory: lib/import reaches the store only to save, which these tests never do)
/**
 * SWE-agent trajectories written before 1.0. Built against princeton-nlp/SWE-agent
 * `tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj`
 * (commit f146cee: `trajectory` steps `{action, observation, response, state, thought}`, a `history` whose assistant
 * messages carry free-text actions and no tool calls, observations returned as user messages, and a demonstration
 * packed into one user message with `is_demo: true`). The fixture (e2e/fixtures/formats/swe-agent-legacy.traj) is a
 * small synthetic file of that shape; a real one placed in ../shared/realdata as sweagent_legacy.traj is read too,
 * and skipped saying so when absent.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readRealdata, realdataFileAbsent, realdataHas } from "@/lib/testing/realdata/files";
import { checkUpload } from "../index";

const check = (text: string) => {
  const r = checkUpload(new TextEncoder().encode(text), { maxBytes: 50_000_000 });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r;
};
const fixture = fs.readFileSync(path.join(process.cwd(), "e2e/fixtures/formats/swe-agent-legacy.traj"), "utf8");
type Step = { thinking: string | null; toolCall: Record<string, unknown> | null; toolResult: unknown };

describe("SWE-agent trajectories before 1.0", () => {
  it("the task is the one prompt, the demonstration no turn, each free-text action a call paired with its observation", () => {
    const r = check(fixture);
    expect(r.format).toBe("swe_agent_trajectory");
    const [c] = r.conversations;
    expect(c.messages.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
    expect(c.messages[1].content).toMatch(/^We're currently solving the following issue/);
    const steps = c.messages[2].steps as Step[];
    expect(steps.filter((s) => s.toolCall).map((s) => s.toolCall)).toEqual([
      { name: "create", arguments: { command: "create reproduce_bug.py\n" }, id: "action_0" },
      { name: "python", arguments: { command: "python reproduce_bug.py\n" }, id: "action_1" },
      { name: "submit", arguments: { command: "submit\n" }, id: "action_2" },
    ]);
    expect(steps.filter((s) => s.toolResult !== null)).toHaveLength(3);
    expect(steps[5].toolResult).toMatch(/^Traceback/);
    expect(steps.filter((s) => s.thinking).map((s) => s.thinking)).toEqual([
      "First, I'll create a script to reproduce the bug.",
      "Now let's run the script to see if we can reproduce the bug.",
      "The fix is in place; let's submit.",
    ]);
    expect(r.records).toMatchObject({ skipped: { "demonstration (kept in meta, not a turn)": 1 } });
  });

  it("keeps the demonstration, the replies as written and the outcome in meta, with no text left out", () => {
    const r = check(fixture);
    const meta = r.conversations[0].meta as Record<string, unknown>;
    expect(meta.info).toMatchObject({ exit_status: "submitted", submission: expect.stringContaining("numpy_handler.py") });
    expect(meta.demonstrations).toEqual([expect.objectContaining({ is_demo: true, content: expect.stringContaining("--- DEMONSTRATION ---") })]);
    expect(meta.model_responses).toHaveLength(3);
    expect(r.notImported).toEqual([]);
  });

  it.skipIf(!realdataHas("sweagent_legacy.traj"))("a real pre-1.0 trajectory: one call per trajectory step, the demonstration not a turn", () => {
    const text = readRealdata("sweagent_legacy.traj");
    const file = JSON.parse(text) as { trajectory: unknown[]; history: Array<{ role: string; is_demo?: boolean }> };
    const r = check(text);
    const [c] = r.conversations;
    const steps = c.messages.flatMap((m) => m.steps as Step[]);
    expect(steps.filter((s) => s.toolCall)).toHaveLength(file.trajectory.length);
    expect(c.messages.filter((m) => m.role === "user")).toHaveLength(1);
    expect((c.meta as { demonstrations?: unknown[] }).demonstrations ?? []).toHaveLength(file.history.filter((m) => m.is_demo).length);
  });
  if (!realdataHas("sweagent_legacy.traj")) it.skip(realdataFileAbsent("sweagent_legacy.traj"), () => {});
});
