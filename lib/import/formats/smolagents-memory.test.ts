// test-stores: no-store (it converts and checks files in memory: lib/import reaches the store only to save, which these tests never do)
/**
 * smolagents memory steps, written from smolagents' memory module (`ActionStep.dict()`, `PlanningStep.dict()`,
 * `TaskStep`, `FinalAnswerStep`, `AgentMemory.get_full_steps()`): the fixture
 * (e2e/fixtures/formats/smolagents-memory.json) is my own code-agent run in that shape — a task, a plan, a step
 * whose code ran, a step whose code failed, the final answer — kept with the agent's system prompt.
 */
import { describe, expect, it } from "vitest";
import { checkUpload } from "@/lib/import";
import { checkFile as check, formatFixture, stepKinds as kinds, type Step } from "@/lib/testing/import/formats";

const fixture = formatFixture("smolagents-memory.json");

/** A tool-calling agent's action step, as `ActionStep.dict()` writes it. */
const action = (n: number, call: { id: string; name: string; arguments: unknown }, observations: string | null, extra: Record<string, unknown> = {}) => ({
  step_number: n,
  timing: { start_time: 1, end_time: 2, duration: 1 },
  model_input_messages: null,
  tool_calls: [{ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }],
  error: null,
  model_output_message: null,
  model_output: null,
  code_action: null,
  observations,
  observations_images: null,
  action_output: null,
  token_usage: null,
  is_final_answer: false,
  ...extra,
});

describe("smolagents memory steps", () => {
  it("a code agent's run: the plan and each step's output are thinking, each call its code, the observations or the error its result, the final output the answer", () => {
    const r = check(fixture);
    expect(r.format).toBe("smolagents_memory");
    const [c] = r.conversations;
    expect(c.name).toBe("How many seconds are there in a leap year?");
    expect(c.meta).toMatchObject({ agent: "CodeAgent", model_id: "gpt-4o-mini" });
    expect(c.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", "You are an expert assistant who can solve any task using code blobs."],
      ["user", "How many seconds are there in a leap year?"],
      ["assistant", "31622400"],
    ]);
    const steps = c.messages[2].steps as Step[];
    expect(kinds(steps)).toEqual(["thinking", "thinking", "call:python_interpreter", "result", "thinking", "call:python_interpreter", "result", "thinking", "call:python_interpreter", "result", "output"]);
    expect(steps[0].thinking).toContain("Multiply the days");
    expect(steps[2].toolCall).toEqual({ name: "python_interpreter", arguments: { code: "days = 366\nprint(days * 24 * 60 * 60)" }, id: "call_1" });
    expect(steps[3].toolResult).toContain("31622400");
    // The failed step's error is its call's result.
    expect(steps[6].toolResult).toBe("Error: AgentExecutionError: Code execution failed at line 'final_answer(seconds)': The variable `seconds` is not defined.");
    // The answer once, though both the final action step and the final answer step hold it.
    expect(steps.filter((s) => s.outputContent === "31622400")).toHaveLength(1);
    // What the model was sent at each step is a copy: listed, with its reason, and nothing else is left behind.
    expect(r.notImported).toEqual([{ path: "steps[].model_input_messages[].content", characters: expect.any(Number), reason: expect.stringContaining("what the model was sent at each step") }]);
    expect(r.records).toMatchObject({ in_file: 6, explanation: expect.stringContaining("memory steps in 1 run") });
  });

  it("a tool-calling agent's steps, saved bare (get_succinct_steps) or one per line: the system prompt from the model's input when no step holds it", () => {
    const steps = [
      { task: "Weather in Paris?", task_images: null },
      action(1, { id: "c1", name: "get_weather", arguments: { city: "Paris" } }, "18°C, cloudy", {
        model_input_messages: [
          { role: "system", content: [{ type: "text", text: "You call tools to answer." }] },
          { role: "user", content: [{ type: "text", text: "New task:\nWeather in Paris?" }] },
        ],
      }),
      action(2, { id: "c2", name: "final_answer", arguments: { answer: "It is 18°C and cloudy in Paris." } }, "It is 18°C and cloudy in Paris.", { is_final_answer: true, action_output: "It is 18°C and cloudy in Paris." }),
    ];
    for (const text of [JSON.stringify(steps), steps.map((s) => JSON.stringify(s)).join("\n")]) {
      const r = check(text);
      expect(r.format).toBe("smolagents_memory");
      expect(r.conversations).toHaveLength(1);
      const [c] = r.conversations;
      expect(c.messages.map((m) => [m.role, m.content])).toEqual([
        ["system", "You call tools to answer."],
        ["user", "Weather in Paris?"],
        ["assistant", "It is 18°C and cloudy in Paris."],
      ]);
      expect(kinds(c.messages[2].steps as Step[])).toEqual(["call:get_weather", "result", "call:final_answer", "result", "output"]);
      expect((c.messages[2].steps as Step[])[0].toolCall).toEqual({ name: "get_weather", arguments: { city: "Paris" }, id: "c1" });
      expect(r.notImported).toEqual([expect.objectContaining({ path: expect.stringContaining("model_input_messages"), characters: "You call tools to answer.".length + "New task:\nWeather in Paris?".length })]);
    }
  });

  it("steps saved by apps: each with its __class__, under `logs`, a code step with its code_action but no tool_calls", () => {
    const logs = {
      logs: [
        { __class__: "TaskStep", task: "Mean of 2, 4 and 9?", task_images: null },
        { __class__: "ActionStep", step_number: 1, model_output_message: { content: "I will average them." }, code_action: "print((2 + 4 + 9) / 3)", observations: "5.0", error: null },
        { __class__: "FinalAnswerStep", output: "5" },
      ],
      run_id: "r-42",
    };
    const r = check(JSON.stringify(logs));
    expect(r.format).toBe("smolagents_memory");
    const [c] = r.conversations;
    expect(c.meta).toMatchObject({ run_id: "r-42" });
    expect(c.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "Mean of 2, 4 and 9?"],
      ["assistant", "5"],
    ]);
    const steps = c.messages[1].steps as Step[];
    expect(kinds(steps)).toEqual(["thinking", "call:python_interpreter", "result", "output"]);
    expect(steps[1].toolCall).toMatchObject({ name: "python_interpreter", arguments: { code: "print((2 + 4 + 9) / 3)" } });
    expect(r.notImported).toEqual([]);
  });

  it("several runs in one file are a conversation each; a list of plain step-like records without an action step is not taken for one", () => {
    const run = (q: string) => ({ steps: [{ task: q }, action(1, { id: "x", name: "search", arguments: { q } }, `found ${q}`)] });
    const r = check(JSON.stringify([run("alpha"), run("beta")]));
    expect(r.format).toBe("smolagents_memory");
    expect(r.conversations.map((c) => c.name)).toEqual(["alpha", "beta"]);
    expect(r.notImported).toEqual([]);
    // Tasks alone are records with a `task` field, not an agent's memory.
    const tasks = checkUpload(new TextEncoder().encode(JSON.stringify([{ task: "a" }, { task: "b" }])), { maxBytes: 1_000_000 });
    expect(tasks.ok && tasks.format).not.toBe("smolagents_memory");
  });

  it("a manager and its managed agent saved by name: a conversation per agent, its name in meta and the title, each agent's model input listed where it sits", () => {
    const input = (text: string) => ({ model_input_messages: [{ role: "system", content: [{ type: "text", text }] }] });
    const memories = {
      manager: {
        system_prompt: "You manage a team.",
        steps: [
          { task: "Who won the 1998 World Cup, and where is that country's capital?" },
          action(1, { id: "m1", name: "web_agent", arguments: { task: "1998 World Cup winner" } }, "France", input("You manage a team.")),
          action(2, { id: "m2", name: "final_answer", arguments: { answer: "France; Paris." } }, "France; Paris.", { is_final_answer: true, action_output: "France; Paris." }),
        ],
      },
      "web agent": [
        { task: "1998 World Cup winner" },
        action(1, { id: "w1", name: "web_search", arguments: { query: "1998 World Cup final" } }, "France beat Brazil 3-0.", input("You search the web.")),
        action(2, { id: "w2", name: "final_answer", arguments: { answer: "France" } }, "France", { is_final_answer: true, action_output: "France" }),
      ],
    };
    const r = check(JSON.stringify(memories));
    expect(r.format).toBe("smolagents_memory");
    expect(r.conversations.map((c) => [c.name, (c.meta as { agent_name?: string } | undefined)?.agent_name])).toEqual([
      ["manager: Who won the 1998 World Cup, and where is that country's capital?", "manager"],
      ["web agent: 1998 World Cup winner", "web agent"],
    ]);
    const [manager, web] = r.conversations;
    expect(manager.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", "You manage a team."],
      ["user", "Who won the 1998 World Cup, and where is that country's capital?"],
      ["assistant", "France; Paris."],
    ]);
    expect(kinds(manager.messages[2].steps as Step[])).toEqual(["call:web_agent", "result", "call:final_answer", "result", "output"]);
    expect(web.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", "You search the web."],
      ["user", "1998 World Cup winner"],
      ["assistant", "France"],
    ]);
    expect(r.notImported).toEqual([
      expect.objectContaining({ path: '"web agent"[].model_input_messages[].content', characters: "You search the web.".length }),
      expect.objectContaining({ path: "manager.steps[].model_input_messages[].content", characters: "You manage a team.".length }),
    ]);
    expect(r.records).toMatchObject({ in_file: 6, explanation: expect.stringContaining("memory steps in 2 runs") });
    // One value that is not an agent's memory: the record is not taken for a multi-agent run.
    const mixed = checkUpload(new TextEncoder().encode(JSON.stringify({ ...memories, model_id: "gpt-4o" })), { maxBytes: 1_000_000 });
    expect(mixed.ok && mixed.format).not.toBe("smolagents_memory");
  });
});
