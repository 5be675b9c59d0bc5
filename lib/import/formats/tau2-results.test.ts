// test-stores: no-store (it converts and checks files in memory: lib/import reaches the store only to save, which these tests never do)
/**
 * tau2-bench results. Built against the results file published in sierra-research/tau2-bench
 * `claude-sonnet-4-5_aide-platform_2025-10-31/trajectories/claude-sonnet-4-5_retail_default_gpt4.1_1trials.json`
 * (commit e8163a3: `info`, `tasks[]`, `simulations[]` with `reward_info` and `messages` whose `raw_data` repeats the
 * provider's response — Anthropic `thinking_blocks` for the agent, the user simulator's reply under role "assistant").
 * The fixture (e2e/fixtures/formats/tau2-results.json) is a small synthetic file of that shape; a real results file
 * placed in ../shared/realdata as tau2_results.json is read too, and skipped saying so when absent.
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
const fixture = fs.readFileSync(path.join(process.cwd(), "e2e/fixtures/formats/tau2-results.json"), "utf8");
type Step = { thinking: string | null; toolCall: Record<string, unknown> | null; toolResult: unknown; outputContent: string | null };
const kinds = (steps: Step[]) => steps.map((s) => (s.thinking ? "thinking" : s.toolCall ? `call:${String(s.toolCall.name)}` : s.toolResult !== null ? "result" : "output"));

describe("tau2-bench results", () => {
  it("one conversation per simulation: the policy as system message, each call once and paired with its result, reasoning as thinking", () => {
    const r = check(fixture);
    expect(r.format).toBe("tau2_results");
    const [ok] = r.conversations;
    expect(ok.messages.map((m) => m.role)).toEqual(["system", "assistant", "user", "assistant", "user", "assistant", "user"]);
    expect(ok.messages[0].content).toMatch(/^# Retail agent policy/);
    // The user simulator's raw_data says role "assistant": its message is still the user's, and once.
    expect(ok.messages[4].content).toBe("yes");
    expect(kinds(ok.messages[3].steps as Step[])).toEqual([
      "thinking",
      "call:find_user_id_by_name_zip",
      "result",
      "call:get_user_details",
      "call:get_order_details",
      "result",
      "result",
      "thinking",
      "output",
    ]);
    const calls = r.conversations.flatMap((c) => c.messages.flatMap((m) => (m.steps as Step[]).filter((s) => s.toolCall)));
    expect(calls).toHaveLength(5);
    expect(calls[0].toolCall).toEqual({ name: "find_user_id_by_name_zip", id: "toolu_01", arguments: { first_name: "Mia", last_name: "Garcia", zip: "46229" } });
  });

  it("keeps the reward, the checks, the task and the run's settings in meta", () => {
    const [ok, failed] = check(fixture).conversations.map((c) => c.meta as Record<string, unknown>);
    expect(ok).toMatchObject({ reward: 1, termination_reason: "user_stop", reward_info: { db_check: { db_match: true } }, task: { id: "0", user_scenario: { instructions: { known_info: "You are Mia Garcia in zip code 46229." } } } });
    expect(ok.run).toMatchObject({ agent_info: { llm: "claude-sonnet-4-5" }, user_info: { llm: "gpt-4.1" }, environment_info: { domain_name: "retail" } });
    expect(failed).toMatchObject({ reward: 0, termination_reason: "max_steps" });
    expect(check(fixture).notImported.every((n) => n.reason?.startsWith("re-serialised"))).toBe(true);
  });

  it.skipIf(!realdataHas("tau2_results.json"))("a real results file: every simulation imported, every agent call paired, reward in meta", () => {
    const text = readRealdata("tau2_results.json");
    const file = JSON.parse(text) as { simulations: Array<{ messages: Array<{ role: string; tool_calls?: unknown[] | null; requestor?: string }> }> };
    const r = check(text);
    expect(r.conversations).toHaveLength(file.simulations.length);
    const fileCalls = file.simulations.flatMap((s) => s.messages.filter((m) => m.role === "assistant").flatMap((m) => m.tool_calls ?? []));
    const steps = r.conversations.flatMap((c) => c.messages.flatMap((m) => m.steps as Step[]));
    expect(steps.filter((s) => s.toolCall)).toHaveLength(fileCalls.length);
    expect(r.conversations.every((c) => typeof (c.meta as Record<string, unknown>).reward === "number")).toBe(true);
  });
  if (!realdataHas("tau2_results.json")) it.skip(realdataFileAbsent("tau2_results.json"), () => {});
});
