/**
 * The reliability suite: `npm run test:reliability` (full) or `--short` (what `npm test` runs).
 * Starts production servers on loopback against the judge test double, runs every section, and writes
 * reliability-report.json. Exits 1 if any check fails.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startJudgeDouble } from "@/lib/testing/judge-double/server";
import { ensureBuild } from "../project.mjs";
import { killDuringImport, killDuringRun, sigtermDuringRun, startScriptOwnsServer } from "./crashes";
import type { Check } from "./data";
import { faultSection, loadSection, type Sizes } from "./load-and-faults";
import { TurnscopeServer } from "./server";
import { accessSection, hostileSection, opsSection, outputSafetySection } from "./security";

const short = process.argv.includes("--short");
/** `--only <section>` (repeatable) runs just those sections, for working on one of them. */
const only = process.argv.flatMap((a, i) => (process.argv[i - 1] === "--only" ? [a] : []));
const sizes: Sizes & { killRunConversations: number; killImportConversations: number; killImportDelays: number[] } = short
  ? { loadConversations: 250, clients: 20, importConversations: 500, faultConversations: 50, killRunConversations: 40, killImportConversations: 8_000, killImportDelays: [250] }
  : { loadConversations: 2_500, clients: 20, importConversations: 5_000, faultConversations: 250, killRunConversations: 100, killImportConversations: 30_000, killImportDelays: [300, 1_200] };

type Section = { passed: boolean; ms: number; checks: Check[]; figures?: Record<string, unknown>; error?: string };

async function main() {
  ensureBuild();
  const started = Date.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-reliability-"));
  const double = await startJudgeDouble({ logger: () => {} });
  const secrets = { token: "reliability-token-3f9a7c", apiKey: "sk-reliability-secret-51d2" };
  const graceMs = 3_000;
  const env = {
    OPENAI_BASE_URL: double.baseURL,
    OPENAI_API_KEY: secrets.apiKey,
    JUDGE_TIMEOUT_MS: "2000",
    JUDGE_MAX_RETRIES: "2",
    SHUTDOWN_GRACE_MS: String(graceMs),
  };
  const sections: Record<string, Section> = {};
  const runSection = async (name: string, fn: () => Promise<{ checks: Check[]; figures?: Record<string, unknown> }>) => {
    if (only.length && !only.includes(name)) return;
    const t = Date.now();
    process.stdout.write(`▸ ${name} … `);
    try {
      const { checks, figures } = await fn();
      const passed = checks.every((c) => c.ok);
      sections[name] = { passed, ms: Date.now() - t, checks, figures };
    } catch (error) {
      sections[name] = { passed: false, ms: Date.now() - t, checks: [], error: (error as Error).stack ?? String(error) };
    }
    const s = sections[name];
    console.log(`${s.passed ? "ok" : "FAILED"} (${(s.ms / 1000).toFixed(1)} s)`);
    for (const c of s.checks.filter((c) => !c.ok)) console.log(`    ✗ ${c.name}${c.detail ? `: ${c.detail}` : ""}`);
    if (s.error) console.log(`    ✗ ${s.error.split("\n").slice(0, 4).join("\n      ")}`);
  };

  const server = new TurnscopeServer({ port: Number(process.env.RELIABILITY_PORT ?? 3411), databasePath: path.join(dir, "main.db"), env });
  try {
    await server.start();
    await runSection("operations", () => opsSection(server));
    await runSection("hostile input", () => hostileSection(server));
    await runSection("output safety", () => outputSafetySection(server, double));
    await runSection("load", () => loadSection(server, double, sizes));
    await runSection("faults", () => faultSection(server, double, sizes));
    await runSection("SIGKILL during a run", () => killDuringRun(server, double, sizes.killRunConversations));
    await runSection("SIGKILL during an import", () => killDuringImport(server, sizes.killImportConversations, sizes.killImportDelays));
    await runSection("SIGTERM during a run", () => sigtermDuringRun(server, double, graceMs));
  } finally {
    await server.stop("SIGTERM").catch(() => server.stop("SIGKILL"));
  }

  const guarded = new TurnscopeServer({
    port: Number(process.env.RELIABILITY_PORT ?? 3411) + 1,
    databasePath: path.join(dir, "guarded.db"),
    env: { ...env, API_TOKEN: secrets.token },
  });
  try {
    await guarded.start();
    await runSection("access", () => accessSection(guarded, secrets));
  } finally {
    await guarded.stop("SIGTERM").catch(() => guarded.stop("SIGKILL"));
  }
  await runSection("npm start owns its server", () => startScriptOwnsServer(Number(process.env.RELIABILITY_PORT ?? 3411) + 2, path.join(dir, "start.db")));
  await double.close();
  fs.rmSync(dir, { recursive: true, force: true });

  const passed = Object.values(sections).every((s) => s.passed);
  const report = {
    mode: short ? "short" : "full",
    passed,
    started_at: new Date(started).toISOString(),
    duration_ms: Date.now() - started,
    machine: { cpus: os.cpus().length, memory_gb: Math.round(os.totalmem() / 2 ** 30), node: process.version },
    sizes,
    sections,
  };
  fs.writeFileSync("reliability-report.json", JSON.stringify(report, null, 2));
  console.log(`\n${passed ? "✓" : "✗"} reliability ${report.mode}: ${Object.values(sections).filter((s) => s.passed).length}/${Object.keys(sections).length} sections passed — reliability-report.json`);
  process.exit(passed ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
