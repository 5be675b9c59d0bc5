/**
 * Issue 37's speed figure: 200 simulated conversations of 10 turns against a target answering in 200 ms
 * with 32 at once, through the production build served by `next start` with DEFAULT settings (only the
 * judge's address is set: the judge test double plays the user and answers at once), driven over HTTP.
 * The target is a second judge double in this process with a 200 ms latency, registered as an
 * `openai_chat` target with `max_concurrency: 32`.
 *
 * Ideal time: a conversation's turns follow one another (each waits for the target's reply), and at most
 * 32 conversations are at the target at once, so with every conversation running its full T turns
 * (the simulator never says the stop token) the best schedule is ⌈N / 32⌉ waves of T × L:
 *   ideal = ⌈N / C⌉ × T × L = ⌈200 / 32⌉ × 10 × 200 ms = 7 × 2,000 ms = 14,000 ms
 * (the fluid bound N × T × L / C = 12,500 ms cannot be reached: no conversation can be split between
 * slots). The simulator's own time counts against the engine. Efficiency = ideal / the generation's
 * duration (finished_at − started_at); target ≥ 0.9. Resident memory of the server (and its children)
 * before and after, so growth with the work shows.
 * GENERATION_BENCH_CONVERSATIONS / _TURNS / _LATENCY_MS change the size for experiments.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startJudgeDouble } from "@/lib/testing/judge-double/server";
import { ensureBuild } from "../scripts/project.mjs";
import { importDataset, waitUntil } from "../scripts/reliability/data";
import { TurnscopeServer } from "../scripts/reliability/server";
import { treeRssMb } from "./support/proc";

const N = Number(process.env.GENERATION_BENCH_CONVERSATIONS ?? 200);
const TURNS = Number(process.env.GENERATION_BENCH_TURNS ?? 10);
const LATENCY_MS = Number(process.env.GENERATION_BENCH_LATENCY_MS ?? 200);
const AT_ONCE = 32;

/** Source conversations, each with its own scenario in meta (the simulator's instructions name it). */
function sources(n: number, tag: string) {
  return {
    conversations: Array.from({ length: n }, (_, i) => ({
      name: `${tag} ${i}`,
      meta: { scenario: `Customer ${tag}-${i} wants to change a booking ${i} and asks about fees.` },
      messages: [
        { role: "user", content: `I need to change booking ${i}.` },
        { role: "assistant", content: "Sure, which date would you like?" },
      ],
    })),
  };
}

async function main() {
  ensureBuild();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-generation-bench-"));
  const simulator = await startJudgeDouble({ logger: () => {} });
  const target = await startJudgeDouble({ logger: () => {} });
  simulator.setDefault({ kind: "text", content: "That date works. What are the fees for changing it?" });
  const server = new TurnscopeServer({
    port: Number(process.env.BENCH_PORT ?? 3511),
    databasePath: path.join(dir, "bench.db"),
    env: { OPENAI_BASE_URL: simulator.baseURL, OPENAI_API_KEY: "sk-bench", LOG_LEVEL: "warn" },
  });
  const loadBefore = Math.round(os.loadavg()[0] * 100) / 100;
  const figures: Record<string, unknown> = {};
  try {
    await server.start();
    const made = await server.request("POST", "/api/targets", { name: "bench target", kind: "openai_chat", url: target.baseURL, model: "bench-target", max_concurrency: AT_ONCE });
    if (made.status !== 201) throw new Error(`target: ${made.status} ${made.text}`);
    const run = async (tag: string) => {
      const { datasetId } = await importDataset(server, `generation-${tag}`, sources(N, tag));
      simulator.reset();
      simulator.setDefault({ kind: "text", content: "That date works. What are the fees for changing it?" });
      target.reset();
      target.setDefault({ kind: "text", content: "The change is free; you are moved to Friday." });
      target.setLatency(LATENCY_MS);
      const rssBefore = treeRssMb(server.pid!);
      const started = await server.request("POST", "/api/generations", { source_dataset_id: datasetId, target_id: made.json.id, mode: "simulate", max_turns: TURNS, simulator: { scenario_path: "meta.scenario" } });
      if (started.status !== 202) throw new Error(`generation: ${started.status} ${started.text}`);
      let peakRss = rssBefore;
      let done: { status: string; completed: number; failed: number; started_at: string; finished_at: string; usage: { target_calls: number; simulator_calls: number } } | null = null;
      await waitUntil(
        "the generation to end",
        async () => {
          peakRss = Math.max(peakRss, treeRssMb(server.pid!));
          const g = await server.request("GET", `/api/generations/${started.json.id}`);
          if (["pending", "processing"].includes(g.json.status)) return false;
          done = g.json;
          return true;
        },
        10 * 60_000,
      );
      const g = done!;
      const duration = Date.parse(g.finished_at) - Date.parse(g.started_at);
      const ideal = Math.ceil(N / AT_ONCE) * TURNS * LATENCY_MS;
      return {
        conversations: N,
        turns: TURNS,
        target_latency_ms: LATENCY_MS,
        at_once: AT_ONCE,
        formula: "ideal = ceil(conversations / at_once) × turns × target_latency_ms",
        ideal_ms: ideal,
        duration_ms: duration,
        efficiency: Math.round((ideal / duration) * 1000) / 1000,
        target: 0.9,
        met: ideal / duration >= 0.9,
        status: g.status,
        completed: g.completed,
        failed: g.failed,
        target_calls: g.usage.target_calls,
        simulator_calls: g.usage.simulator_calls,
        target_peak_in_flight: target.stats().peakInFlight,
        rss_mb_before: rssBefore,
        rss_mb_peak: peakRss,
        rss_mb_after: treeRssMb(server.pid!),
      };
    };
    // The first generation on a freshly started server pays for cold code; the next is what users meet later.
    figures.first_run = await run("g1");
    console.error("first run", JSON.stringify(figures.first_run));
    figures.next_run = await run("g2");
    console.error("next run", JSON.stringify(figures.next_run));
  } finally {
    await server.stop("SIGTERM").catch(() => server.stop("SIGKILL"));
    await simulator.close();
    await target.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const machine = { cpus: os.cpus().length, node: process.version, load_average_before: loadBefore, load_average_after: Math.round(os.loadavg()[0] * 100) / 100 };
  console.log(`BENCH_RESULT ${JSON.stringify({ generation_served: { machine, ...figures } })}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
