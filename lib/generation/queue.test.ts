/**
 * Generations on the queue (issue 37), on either store: a cancel through the route stops the calls and
 * the writes and ends the stream; a generation whose process died holding it is taken up where it was —
 * each source conversation × repeat written once, the dead process's conversations counted — and one
 * whose processes died MAX_ATTEMPTS times is failed saying so, never left "processing"; a process that
 * shuts down gives its generations back with their progress.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as conversations from "@/app/api/datasets/[id]/conversations/route";
import * as cancel from "@/app/api/generations/[id]/cancel/route";
import * as events from "@/app/api/generations/[id]/events/route";
import * as evaluate from "@/app/api/generations/[id]/evaluate/route";
import { releaseDeadClaims } from "@/db/repositories/generation-queue";
import * as generationItem from "@/app/api/generations/[id]/route";
import * as generations from "@/app/api/generations/route";
import * as targets from "@/app/api/targets/route";
import { writeConversations } from "@/db/repositories/conversation-writes";
import { getGeneration } from "@/db/repositories/targets";
import { rawRun, transaction } from "@/db/store";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { readSse } from "@/lib/testing/http/sse";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { loadSampleDataset, type LoadedSample } from "@/lib/testing/seed/sample";
import { until } from "@/lib/testing/setup/until";
import { waitForGeneration } from "./index";
import { drainGenerations, EXHAUSTED_MESSAGE, MAX_ATTEMPTS, wakeGenerationQueue, workGenerationsHere } from "./queue";

let double: JudgeDouble;
let sample: LoadedSample;
let targetId: number;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  double = await startJudgeDouble();
  process.env.OPENAI_BASE_URL = double.baseURL;
  resetConfig();
  sample = await loadSampleDataset({ name: "queue source" });
  targetId = (await call(targets.POST, "POST", "/x", { body: { name: "candidate", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini" } })).json.id as number;
});

afterAll(async () => {
  delete process.env.OPENAI_BASE_URL;
  resetConfig();
  await double?.close();
});

beforeEach(() => {
  double.reset();
  workGenerationsHere(true);
});

const start = async (body: Record<string, unknown> = {}) => {
  const res = await call(generations.POST, "POST", "/api/generations", { body: { source_dataset_id: sample.datasetId, target_id: targetId, mode: "replay", ...body } });
  expect(res.status, res.text).toBe(202);
  return res.json as { id: number; dataset_id: number; total: number };
};
const follow = (id: number) => events.GET(new Request("http://localhost/x"), { params: Promise.resolve({ id: String(id) }) });
const read = async (id: number) => (await call(generationItem.GET, "GET", "/x", { params: { id } })).json;
const sourcesWritten = async (datasetId: number) =>
  ((await call(conversations.GET, "GET", "/x?limit=500", { params: { id: datasetId } })).json as Array<{ meta: { source_conversation_id: number; repeat: number } }>).map(
    (c) => `${c.meta.source_conversation_id}:${c.meta.repeat}`,
  );

/** A generation created while this process does not work generations, then made to look as a dead process left it. */
async function leftByDeadProcess(attempts: number, writtenBefore: Array<{ source: number; repeat: number }>, usage: unknown = null) {
  workGenerationsHere(false);
  const g = await start({ repeats: 2 });
  const past = new Date(Date.now() - 60_000).toISOString();
  await rawRun("update generations set status = 'processing', claimed_by = 'dead-host:1:x', lease_until = ?, attempts = ?, usage = ? where id = ?", [past, attempts, JSON.stringify(usage), g.id]);
  await transaction(function* () {
    for (const w of writtenBefore) {
      yield* writeConversations(g.dataset_id, [{ conversation: { name: "before", description: null, agents: null, meta: { source_conversation_id: w.source, repeat: w.repeat, generation_id: g.id, stop_reason: "end_of_source" }, messages: [{ role: "user", content: "hi", meta: null, steps: [] }] } }], new Date().toISOString());
    }
  });
  return g;
}

describe("generations on the queue (issue 37)", () => {
  it("a cancel through the route ends it at once, aborts the calls in flight, writes nothing more, and its stream ends with done", async () => {
    double.setDefault({ kind: "hang" });
    const g = await start({ repeats: 2, batch_size: 3 });
    await until("three calls in flight", () => double.requests.length >= 3);
    // Nothing to compare yet: evaluating a running generation is refused.
    expect((await call(evaluate.POST, "POST", "/x", { params: { id: g.id }, body: { pipeline_node_ids: [1] } })).status).toBe(409);
    const res = await call(cancel.POST, "POST", "/x", { params: { id: g.id } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ status: "cancelled", completed: 0 });
    await waitForGeneration(g.id);
    await until("the calls to be aborted", () => double.requests.every((r) => r.closedAt !== null));
    expect(double.requests).toHaveLength(3);
    expect(await sourcesWritten(g.dataset_id)).toEqual([]);
    expect((await getGeneration(g.id))?.claimedBy).toBeNull();
    const stream = await readSse(await follow(g.id));
    expect(stream.at(-1)).toMatchObject({ event: "done", data: { status: "cancelled" } });
    expect((await call(cancel.POST, "POST", "/x", { params: { id: g.id } })).status).toBe(409);
  });

  it("a generation whose process died is taken up where it was: each conversation × repeat once, the dead process's conversations counted", async () => {
    double.setDefault({ kind: "text", content: "Done." });
    const [a, b] = sample.conversations;
    const g = await leftByDeadProcess(1, [{ source: a.id, repeat: 0 }, { source: b.id, repeat: 1 }]);
    const stream = follow(g.id).then((r) => readSse(r, { timeoutMs: 30_000 }));
    workGenerationsHere(true);
    await waitForGeneration(g.id);
    const done = await read(g.id);
    expect(done).toMatchObject({ status: "completed", total: 2 * sample.conversations.length, completed: 2 * sample.conversations.length, failed: 0 });
    const written = await sourcesWritten(g.dataset_id);
    expect(written).toHaveLength(2 * sample.conversations.length);
    expect(new Set(written).size).toBe(written.length);
    // Only what the dead process had not written was sent again.
    const userTurns = (c: LoadedSample["conversations"][number]) => c.messages.filter((m) => m.role === "user").length;
    const all = 2 * sample.conversations.reduce((n, c) => n + userTurns(c), 0);
    expect(done.usage.target_calls).toBe(all - userTurns(a) - userTurns(b));
    expect((await getGeneration(g.id))?.attempts).toBe(2);
    // The stream names every conversation, the dead process's too, then done.
    const seen = await stream;
    expect(seen.filter((e) => e.event === "conversation")).toHaveLength(2 * sample.conversations.length);
    expect(seen.at(-1)).toMatchObject({ event: "done", data: { status: "completed" } });
  });

  it("a call's start is saved before the call goes out, so the calls a process has out are on its row", async () => {
    double.setDefault({ kind: "hang" });
    const g = await start({ repeats: 2, batch_size: 3 });
    await until("three calls in flight", () => double.requests.length >= 3);
    // The double has them: each one's start had landed on the row before it was sent (none has ended).
    const usage = (await getGeneration(g.id))?.usage;
    expect((await call(cancel.POST, "POST", "/x", { params: { id: g.id } })).status).toBe(200);
    await waitForGeneration(g.id);
    expect(usage).toMatchObject({ target_calls: 0, in_flight: { target: 3, simulator: 0 } });
    // Aborted, they ended: counted as calls, none left out.
    expect((await read(g.id)).usage).toMatchObject({ target_calls: 3, lost_calls: 0 });
    expect((await getGeneration(g.id))?.usage).toMatchObject({ in_flight: { target: 0, simulator: 0 } });
  });

  it("a generation whose process died with calls out is taken up with those calls counted (lost_calls), its saved usage kept", async () => {
    double.setDefault({ kind: "text", content: "Done." });
    const [a, b] = sample.conversations;
    // The dead process had saved 4 answered calls and had 2 more out when it stopped.
    const before = { target_calls: 4, simulator_calls: 0, input_tokens: 100, output_tokens: 20, cost_usd: 0, in_flight: { target: 2, simulator: 0 } };
    const g = await leftByDeadProcess(1, [{ source: a.id, repeat: 0 }, { source: b.id, repeat: 1 }], before);
    workGenerationsHere(true);
    await waitForGeneration(g.id);
    const done = await read(g.id);
    expect(done.status).toBe("completed");
    const userTurns = (c: LoadedSample["conversations"][number]) => c.messages.filter((m) => m.role === "user").length;
    const sentNow = 2 * sample.conversations.reduce((n, c) => n + userTurns(c), 0) - userTurns(a) - userTurns(b);
    expect(done.usage).toMatchObject({ target_calls: 4 + 2 + sentNow, lost_calls: 2 });
    expect(done.usage.input_tokens).toBeGreaterThan(100);
    // Nothing is out once it ended, and the calls counted are not counted again.
    expect((await getGeneration(g.id))?.usage).toMatchObject({ in_flight: { target: 0, simulator: 0 } });
  });

  it("a single-process store's server that starts frees its predecessor's claims at once, lease or not (SQLite restarts resume at once)", async () => {
    double.setDefault({ kind: "text", content: "Done." });
    const g = await leftByDeadProcess(1, []);
    const future = new Date(Date.now() + 10 * 60_000).toISOString();
    await rawRun("update generations set lease_until = ? where id = ?", [future, g.id]);
    workGenerationsHere(true);
    await sleep(100);
    // Still held: its lease runs for ten more minutes.
    expect((await getGeneration(g.id))?.claimedBy).toBe("dead-host:1:x");
    expect(await releaseDeadClaims("this-process")).toBe(1);
    wakeGenerationQueue();
    await waitForGeneration(g.id);
    expect(await read(g.id)).toMatchObject({ status: "completed", completed: 2 * sample.conversations.length });
  });

  it(`one whose processes died ${MAX_ATTEMPTS} times is failed saying so, its conversations kept — never left processing`, async () => {
    const g = await leftByDeadProcess(MAX_ATTEMPTS, [{ source: sample.conversations[0].id, repeat: 0 }]);
    workGenerationsHere(true);
    await waitForGeneration(g.id);
    expect(await read(g.id)).toMatchObject({ status: "failed", error: EXHAUSTED_MESSAGE });
    expect(await sourcesWritten(g.dataset_id)).toHaveLength(1);
    expect(double.count()).toBe(0);
  });

  it("a process that shuts down gives its generations back at once, with their progress, for another process to take up", async () => {
    double.setDefault({ kind: "text", content: "Done." });
    double.addRule({ match: "charged twice", behaviour: { kind: "hang" } });
    const g = await start({ batch_size: 1 });
    // A request is recorded as it arrives and its body once read: one still being read has none yet (and
    // JSON.stringify(undefined) has no includes(), which failed the wait instead of trying again).
    await until("a hung call", () => double.requests.some((r) => r.closedAt === null && r.body !== undefined && JSON.stringify(r.body).includes("charged twice")));
    const before = (await getGeneration(g.id))!;
    expect(before.claimedBy).not.toBeNull();
    await drainGenerations(0);
    const after = (await getGeneration(g.id))!;
    expect(after).toMatchObject({ status: "processing", claimedBy: null, leaseUntil: null, attempts: 0 });
    expect(after.completed).toBe((await sourcesWritten(g.dataset_id)).length);
    expect(after.completed).toBeGreaterThan(0);
    wakeGenerationQueue();
  });
});
