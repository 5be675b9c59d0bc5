/**
 * Issue 37 on real data: `simulate` over the 200 tau-bench airline trajectories in ../shared/realdata, the
 * simulated user following each conversation's own scenario (`meta.info.task.instruction`), the judge
 * double as the target and as the simulator. Every generated conversation is linked to its source and
 * every stop reason counted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as conversation from "@/app/api/conversations/[id]/route";
import * as conversations from "@/app/api/datasets/[id]/conversations/route";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as generationItem from "@/app/api/generations/[id]/route";
import * as generations from "@/app/api/generations/route";
import * as targets from "@/app/api/targets/route";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { readRealdata, realdataAbsentMessage, realdataPresent } from "@/lib/testing/realdata/files";
import { waitForGeneration } from "./index";

const file = "tau-bench_gpt-4o-airline.json";
let double: JudgeDouble;

beforeAll(async () => {
  double = await startJudgeDouble();
  process.env.OPENAI_BASE_URL = double.baseURL;
  resetConfig();
});
afterAll(async () => {
  delete process.env.OPENAI_BASE_URL;
  resetConfig();
  await double.close();
});

describe.skipIf(!realdataPresent)(`simulate over the airline trajectories (${realdataPresent ? file : realdataAbsentMessage})`, () => {
  it("200 simulated conversations, each from its own scenario, linked to its source, stop reasons counted", async () => {
    const tasks = JSON.parse(readRealdata(file)) as Array<{ info: { task: { instruction: string } } }>;
    const imported = await upload(createAndImport.POST, "/api/datasets/import", { file: readRealdata(file), fields: { name: "airline" }, filename: file });
    expect(imported.status, imported.text.slice(0, 300)).toBe(201);
    const source = imported.json.dataset.id as number;
    const target = await call(targets.POST, "POST", "/x", { body: { name: "agent v2", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini" } });
    // The simulated users whose scenario is a trip to Seattle are done at once; the others talk until max_turns.
    double.addRule({ match: /You play the USER[\s\S]*Seattle/, behaviour: { kind: "text", content: "###STOP###" } });
    double.addRule({ match: "You play the USER", behaviour: { kind: "text", content: "I would like to change my reservation, please." } });
    double.setDefault({ kind: "text", content: "Certainly: which reservation?" });
    const started = await call(generations.POST, "POST", "/x", { body: { source_dataset_id: source, target_id: target.json.id, mode: "simulate", max_turns: 2, simulator: { scenario_path: "meta.info.task.instruction" } } });
    expect(started.status, started.text).toBe(202);
    await waitForGeneration(started.json.id);
    const g = (await call(generationItem.GET, "GET", "/x", { params: { id: started.json.id } })).json;
    const seattle = tasks.filter((t) => t.info.task.instruction.includes("Seattle")).length;
    expect(seattle).toBeGreaterThan(0);
    expect(g).toMatchObject({ status: "completed", total: 200, completed: 200, failed: 0, stop_reasons: { stop_token: seattle, max_turns: 200 - seattle, target_error: 0, simulator_error: 0 } });
    expect(g.usage.target_calls).toBe(2 * (200 - seattle));

    const list = (await call(conversations.GET, "GET", "/x?limit=500", { params: { id: g.dataset_id } })).json as Array<{ id: number }>;
    expect(list).toHaveLength(200);
    const sources = (await call(conversations.GET, "GET", "/x?limit=500", { params: { id: source } })).json as Array<{ id: number }>;
    const linked = new Set<number>();
    for (const c of list.slice(0, 200)) {
      const one = (await call(conversation.GET, "GET", "/x", { params: { id: c.id } })).json as { meta: { source_conversation_id: number; scenario: string; source_meta: { info: { task: { instruction: string } } } } };
      linked.add(one.meta.source_conversation_id);
      expect(one.meta.scenario).toBe(one.meta.source_meta.info.task.instruction);
    }
    expect([...linked].sort()).toEqual(sources.map((s) => s.id).sort());
  }, 120_000);
});
