/**
 * Generations shared by separate processes (PostgreSQL): this test process is the API server and works
 * no generation itself (workGenerationsHere(false)); worker processes (lib/generation/testing/
 * generation-worker-child.ts, `npm run worker`'s generation queue) claim them. A worker picks up a
 * queued generation and its stream, served here, follows it over NOTIFY; a cancel here stops the calls
 * there; a worker SIGKILLed mid-generation loses it when its lease runs out and another takes it up
 * where it was, each conversation × repeat written once.
 * Runs in the PostgreSQL pass (TEST_STORE=postgres); skipped, saying so, on SQLite.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import * as conversations from "@/app/api/datasets/[id]/conversations/route";
import * as cancel from "@/app/api/generations/[id]/cancel/route";
import * as events from "@/app/api/generations/[id]/events/route";
import * as generations from "@/app/api/generations/route";
import * as targets from "@/app/api/targets/route";
import { getGeneration } from "@/db/repositories/targets";
import { resetConfig } from "@/lib/config";
import { bundleTestChild } from "@/lib/testing/setup/child-bundle";
import { until as waitFor } from "@/lib/testing/setup/until";
import { call } from "@/lib/testing/http/call";
import { readSse } from "@/lib/testing/http/sse";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { loadSampleDataset, type LoadedSample } from "@/lib/testing/seed/sample";
import { waitForGeneration } from "./index";
import { workGenerationsHere } from "./queue";

const queued = Boolean(process.env.DATABASE_URL);
const title = queued ? "generations across processes" : "generations across processes — SKIPPED: PostgreSQL only (TEST_STORE=postgres)";
const LEASE_SECONDS = 2;

type Child = { name: string; proc: ChildProcess; ready: Promise<void>; stderr: () => string; exited: Promise<unknown> };
const children: Child[] = [];
let bundle = "";

function startWorker(name: string): Child {
  const proc = spawn(process.execPath, ["--conditions=react-server", bundle], {
    cwd: process.cwd(),
    env: { ...process.env, LOG_LEVEL: "warn", WORKER_NAME: name, JOB_VISIBILITY_TIMEOUT_SECONDS: String(LEASE_SECONDS) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  const ready = new Promise<void>((resolve, reject) => {
    let out = "";
    proc.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes('"event":"ready"')) resolve();
      if (out.includes('"event":"error"')) reject(new Error(`${name}: ${out}`));
    });
  });
  const child = { name, proc, ready, stderr: () => stderr, exited: new Promise((r) => proc.on("exit", r)) };
  children.push(child);
  return child;
}

const until = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000) =>
  waitFor(what, check, timeoutMs, { every: 50, detail: () => children.map((c) => `${c.name}: ${c.stderr()}`).join("\n") });

describe.skipIf(!queued)(title, () => {
  let double: JudgeDouble;
  let sample: LoadedSample;
  let targetId: number;

  beforeAll(async () => {
    bundle = await bundleTestChild("lib/generation/testing/generation-worker-child.ts", "cjs");
    double = await startJudgeDouble();
    process.env.JOB_VISIBILITY_TIMEOUT_SECONDS = String(LEASE_SECONDS);
    resetConfig();
    workGenerationsHere(false);
    sample = await loadSampleDataset({ name: "cluster source" });
    targetId = (await call(targets.POST, "POST", "/x", { body: { name: "candidate", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini" } })).json.id as number;
  }, 60_000);

  afterEach(async () => {
    for (const c of children.splice(0)) {
      if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill("SIGKILL");
      await c.exited;
    }
    double.reset();
  });

  afterAll(async () => {
    delete process.env.JOB_VISIBILITY_TIMEOUT_SECONDS;
    resetConfig();
    await double?.close();
    fs.rmSync(bundle, { force: true });
  });

  const start = async (body: Record<string, unknown>) => {
    const res = await call(generations.POST, "POST", "/api/generations", { body: { source_dataset_id: sample.datasetId, target_id: targetId, mode: "replay", ...body } });
    expect(res.status, res.text).toBe(202);
    return res.json as { id: number; dataset_id: number; total: number };
  };
  const follow = (id: number) => events.GET(new Request("http://localhost/x"), { params: Promise.resolve({ id: String(id) }) });
  const written = async (datasetId: number) =>
    ((await call(conversations.GET, "GET", "/x?limit=500", { params: { id: datasetId } })).json as Array<{ meta: { source_conversation_id: number; repeat: number } }>).map(
      (c) => `${c.meta.source_conversation_id}:${c.meta.repeat}`,
    );

  it("a worker process picks up a queued generation; the stream served here follows it conversation by conversation", async () => {
    const worker = startWorker("w1");
    await worker.ready;
    double.setLatency(20);
    const g = await start({ repeats: 2 });
    const stream = readSse(await follow(g.id), { timeoutMs: 60_000 });
    await waitForGeneration(g.id);
    const row = (await getGeneration(g.id))!;
    expect(row).toMatchObject({ status: "completed", completed: g.total, failed: 0, attempts: 1, claimedBy: null });
    const seen = await stream;
    expect(seen.filter((e) => e.event === "conversation")).toHaveLength(g.total);
    expect(seen.at(-1)).toMatchObject({ event: "done", data: { status: "completed", completed: g.total } });
  }, 120_000);

  it("a cancel here stops the calls the worker has out and writes nothing more", async () => {
    const worker = startWorker("w1");
    await worker.ready;
    double.setDefault({ kind: "hang" });
    const g = await start({ repeats: 2, batch_size: 2 });
    await until("the worker's calls to hang", () => double.requests.length >= 2);
    const res = await call(cancel.POST, "POST", "/x", { params: { id: g.id } });
    expect(res.json).toMatchObject({ status: "cancelled" });
    await until("the worker to abort its calls", () => double.requests.every((r) => r.closedAt !== null), 30_000);
    await waitForGeneration(g.id);
    expect(await written(g.dataset_id)).toEqual([]);
    expect(double.requests).toHaveLength(2);
  }, 120_000);

  it("a worker SIGKILLed mid-generation: another takes it up once the lease runs out, each conversation × repeat written once", async () => {
    const [victim, other] = [startWorker("victim"), startWorker("other")];
    await Promise.all([victim.ready, other.ready]);
    double.setLatency(150);
    const g = await start({ repeats: 4, batch_size: 2 });
    await until("some conversations written", async () => (await written(g.dataset_id)).length >= 3);
    const holder = (await getGeneration(g.id))!.claimedBy!;
    const [held, survivor] = holder.includes(`:${victim.proc.pid}:`) ? [victim, other] : [other, victim];
    held.proc.kill("SIGKILL");
    await held.exited;
    await waitForGeneration(g.id);
    const row = (await getGeneration(g.id))!;
    expect(row, survivor.stderr()).toMatchObject({ status: "completed", completed: g.total, failed: 0, attempts: 2 });
    const all = await written(g.dataset_id);
    expect(all).toHaveLength(g.total);
    expect(new Set(all).size).toBe(g.total);
  }, 120_000);
});
