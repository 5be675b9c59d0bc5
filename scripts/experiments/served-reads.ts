/**
 * Served A/B of read cost: production servers of two builds (project trees) on copies of the same
 * database, taking turns, each under the `load` section's 20 closed-loop readers and six read URLs for
 * a fixed time; reports read p50/p99 and the server's CPU per read (from /proc) per turn. Readers only
 * (the section's "floor"), so the figures change with the read path alone.
 *
 *   # the database: scripts/experiments/read-cpu.ts prepare --db /tmp/reads-cpu.db
 *   npx tsx scripts/experiments/served-reads.ts --db /tmp/reads-cpu.db --trees /tmp/base,/work/wt/reads [--seconds 30] [--rounds 2]
 *
 * Each tree must hold a production build of its sources (`next build`). Port: RELIABILITY_PORT.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { percentile } from "../reliability/data";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const dbArg = arg("db", "/tmp/reads-cpu.db");
const trees = arg("trees", process.cwd()).split(",");
const seconds = Number(arg("seconds", "30"));
const rounds = Number(arg("rounds", "2"));
const clients = Number(arg("clients", "20"));
const port = Number(process.env.RELIABILITY_PORT ?? 3630);

function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function start(tree: string, db: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(tree, "node_modules", "next", "dist", "bin", "next"), "start", "-p", String(port), "-H", "127.0.0.1"], {
    cwd: tree,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NEXT_MANUAL_SIG_HANDLE: "true", DATABASE_PATH: db, LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Read and drop the log, as the reliability harness reads it.
  child.stdout?.on("data", () => {});
  child.stderr?.on("data", () => {});
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server in ${tree} exited at start`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/health`)).status === 200) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error("server did not become healthy");
}

async function turn(tree: string) {
  const info = JSON.parse(fs.readFileSync(`${dbArg}.json`, "utf8")) as { datasetId: number; small: number; big: number; conversations: number };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-served-reads-"));
  const db = path.join(dir, "copy.db");
  fs.copyFileSync(dbArg, db);
  const child = await start(tree, db);
  const { datasetId, small, big, conversations: n } = info;
  const reads = [
    () => `/api/datasets/${datasetId}/grid?level=conversation&limit=50&offset=${Math.floor(Math.random() * n)}`,
    () => `/api/datasets/${datasetId}/grid?level=step&limit=50&offset=${Math.floor(Math.random() * n * 2)}`,
    () => `/api/evaluation-pipeline-executions?dataset_id=${datasetId}&limit=20`,
    () => `/api/evaluation-pipeline-executions/${big}`,
    () => `/api/evaluation-pipeline-executions/${small}/results?limit=100&offset=${Math.floor(Math.random() * n)}`,
    () => `/api/datasets?limit=20`,
  ];
  const latencies: number[] = [];
  let failures = 0;
  let recording = false;
  let running = true;
  const client = async () => {
    while (running) {
      const p = reads[Math.floor(Math.random() * reads.length)]();
      const t = performance.now();
      try {
        const res = await fetch(`http://127.0.0.1:${port}${p}`);
        await res.arrayBuffer();
        if (recording) {
          latencies.push(performance.now() - t);
          if (res.status !== 200) failures++;
        }
      } catch {
        if (recording) failures++;
      }
    }
  };
  const all = Array.from({ length: clients }, client);
  await new Promise((r) => setTimeout(r, 3_000)); // warm-up
  const cpu0 = cpuSeconds(child.pid!);
  const load0 = os.loadavg()[0];
  recording = true;
  await new Promise((r) => setTimeout(r, seconds * 1000));
  recording = false;
  const cpu = cpuSeconds(child.pid!) - cpu0;
  running = false;
  await Promise.all(all);
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    at: new Date().toISOString().slice(11, 19),
    tree,
    reads: latencies.length,
    failures,
    reads_per_s: Math.round(latencies.length / seconds),
    p50_ms: percentile(latencies, 50),
    p99_ms: percentile(latencies, 99),
    server_cpu_cores: Math.round((cpu / seconds) * 100) / 100,
    cpu_ms_per_read: Math.round(((cpu * 1000) / latencies.length) * 100) / 100,
    loadavg: [load0, os.loadavg()[0]].map((x) => Math.round(x * 10) / 10),
  };
}

async function main() {
  for (let r = 0; r < rounds; r++) {
    for (const tree of r % 2 ? [...trees].reverse() : trees) {
      const line = JSON.stringify(await turn(tree));
      console.log(line);
      fs.appendFileSync("/tmp/served-reads.jsonl", line + "\n");
    }
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
