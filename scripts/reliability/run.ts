/**
 * The reliability suite: `npm run test:reliability` (full) or `--short` (what `npm test` runs).
 * Starts production servers on loopback against the judge test double, runs every section, and writes
 * reliability-report.json. Exits 1 if any check fails. `--store-dependent` leaves out the sections the
 * store cannot change (`npm test`'s PostgreSQL pass).
 */
import fs from "node:fs";
import os from "node:os";
import { startJudgeDouble } from "@/lib/testing/judge-double/server";
import { ensureBuild } from "../project.mjs";
import { killDuringGeneration, killDuringImport, killDuringRun, sigtermDuringRun, startScriptOwnsServer } from "./crashes";
import type { Check } from "./data";
import { faultSection, loadSection, type Sizes } from "./load-and-faults";
import { TurnscopeServer } from "./server";
import { accessSection, hostileSection, opsSection, outputSafetySection, userInputSection } from "./security";
import { ReliabilityStore, storeKindFromArgs } from "./store";
import { boundsSection } from "./bounds";
import { seedTargetAndGeneration, targetsSection } from "./targets";

const short = process.argv.includes("--short");
/** `--only <section>` (repeatable) runs just those sections, for working on one of them. */
const only = process.argv.flatMap((a, i) => (process.argv[i - 1] === "--only" ? [a] : []));
/**
 * Sections whose outcome cannot depend on the store: they check health, request logs and exports' cell
 * encoding, and the store under them is already tested on both stores by the
 * route tests (vitest). `--store-dependent` (what `npm test`'s PostgreSQL pass passes) skips them,
 * so the second pass spends its time on what does differ: the queue, crashes, shutdown, load,
 * transactions and the database's refusals. A new section runs on both stores unless it is named here
 * with its reason (docs/testing.md).
 */
const storeIndependent: Record<string, string> = {
  operations: "health and JSON request logs (the health route's database probe is a route test on both stores)",
  "output safety": "CSV/XLSX formula neutralisation and prompt fencing are encoding, done after the store is read",
};
const storeDependentOnly = process.argv.includes("--store-dependent");
const skipped = (name: string) => (only.length > 0 && !only.includes(name)) || (storeDependentOnly && name in storeIndependent);
/** `--store postgres` (or RELIABILITY_STORE=postgres): the servers run on a throwaway PostgreSQL cluster. */
const storeKind = storeKindFromArgs(process.argv, process.env);
/**
 * PostgreSQL: the queue's visibility timeout for the suite's servers. Short, so the batches of a
 * SIGKILLed server come back within seconds (docs/postgresql.md: ~1.5 × the timeout + 3 s) — long enough that a
 * live server's heartbeat (every third of it) keeps its batches under the load section's reads.
 */
const visibilitySeconds = 10;
const sizes: Sizes & { killRunConversations: number; killImportConversations: number; killImportDelays: number[] } = short
  ? { loadConversations: 250, clients: 20, importConversations: 500, faultConversations: 50, killRunConversations: 40, killImportConversations: 8_000, killImportDelays: [250] }
  : { loadConversations: 2_500, clients: 20, importConversations: 5_000, faultConversations: 250, killRunConversations: 100, killImportConversations: 30_000, killImportDelays: [300, 1_200] };

type Section = { passed: boolean; ms: number; checks: Check[]; figures?: Record<string, unknown>; error?: string };

async function main() {
  const started = Date.now();
  const since = (t: number) => `${((Date.now() - t) / 1000).toFixed(1)} s`;
  ensureBuild();
  console.log(`▸ build checked (${since(started)})`);
  const opening = Date.now();
  const store = await ReliabilityStore.open(storeKind);
  console.log(`▸ store opened (${since(opening)})`);
  console.log(`▸ store: ${storeKind === "postgres" ? `PostgreSQL (throwaway cluster, JOB_VISIBILITY_TIMEOUT_SECONDS=${visibilitySeconds})` : "SQLite"}`);
  if (storeDependentOnly) console.log(`▸ not run here, store-independent (run on SQLite): ${Object.keys(storeIndependent).join(", ")}`);
  const double = await startJudgeDouble({ logger: () => {}, billAbandoned: true });
  const secrets = { token: "reliability-token-3f9a7c", apiKey: "sk-reliability-secret-51d2" };
  const graceMs = 3_000;
  const env = {
    OPENAI_BASE_URL: double.baseURL,
    OPENAI_API_KEY: secrets.apiKey,
    JUDGE_TIMEOUT_MS: "2000",
    JUDGE_MAX_RETRIES: "2",
    // $1 per 1,000 tokens either way: the bounds section's capped run (no other section reads a cost).
    JUDGE_PRICES: JSON.stringify({ "gpt-4o-mini": { input: 1000, output: 1000 } }),
    SHUTDOWN_GRACE_MS: String(graceMs),
    ...(storeKind === "postgres" ? { JOB_VISIBILITY_TIMEOUT_SECONDS: String(visibilitySeconds) } : {}),
  };
  const sections: Record<string, Section> = {};
  const runSection = async (name: string, fn: () => Promise<{ checks: Check[]; figures?: Record<string, unknown> }>) => {
    if (skipped(name)) return;
    const t = Date.now();
    try {
      const { checks, figures } = await fn();
      const passed = checks.every((c) => c.ok);
      sections[name] = { passed, ms: Date.now() - t, checks, figures };
    } catch (error) {
      sections[name] = { passed: false, ms: Date.now() - t, checks: [], error: (error as Error).stack ?? String(error) };
    }
    const s = sections[name];
    // One line when the section ends: two groups of sections run side by side (below).
    console.log(`▸ ${name} … ${s.passed ? "ok" : "FAILED"} (${(s.ms / 1000).toFixed(1)} s)`);
    for (const c of s.checks.filter((c) => !c.ok)) console.log(`    ✗ ${c.name}${c.detail ? `: ${c.detail}` : ""}`);
    if (s.error) console.log(`    ✗ ${s.error.split("\n").slice(0, 4).join("\n      ")}`);
  };

  const basePort = Number(process.env.RELIABILITY_PORT ?? 3411);
  /**
   * The sections on servers of their own (the sign-in server, `npm start`'s) run beside the main
   * server's first sections, which do not time anything: their servers' start-up and the waits for a
   * port to close overlap work instead of following it. They never call the judge double, so the
   * sections that count its calls cannot see them; the main server's sections that time anything (the
   * 1 s read during a run, the crashes' recovery bounds) start only once they are done.
   */
  const ownServers = (async () => {
    const guarded = new TurnscopeServer({ port: basePort + 1, ...(await store.database("guarded")), env: { ...env, API_TOKEN: secrets.token } });
    try {
      await guarded.start();
      // Before access: it ends by locking this client's address out. It leaves a target and a generation in the store, so the role matrix meets real rows.
      await runSection("targets are no door out", () => targetsSection(guarded, secrets));
      await runSection("access", () => accessSection(guarded, secrets));
    } finally {
      await guarded.stop("SIGTERM").catch(() => guarded.stop("SIGKILL"));
    }
    await runSection("npm start owns its server", async () => startScriptOwnsServer(basePort + 2, await store.database("start")));
  })();
  // Settled here, awaited below (a rejection is not left unhandled while the main sections run).
  const ownServersDone = ownServers.then(
    () => undefined,
    (error: unknown) => error,
  );

  const server = new TurnscopeServer({ port: basePort, ...(await store.database("main")), env });
  try {
    const booting = Date.now();
    await server.start();
    console.log(`▸ server started (${since(booting)})`);
    await runSection("operations", () => opsSection(server));
    // The fuzz meets a real target and generation at the ids it tries (issue 48).
    await runSection("hostile input", async () => {
      await seedTargetAndGeneration(server);
      return hostileSection(server);
    });
    await runSection("load", () => loadSection(server, double, sizes));
    await runSection("faults", () => faultSection(server, double, sizes));
    const ownServersError = await ownServersDone;
    if (ownServersError) throw ownServersError;
    await runSection("user patterns and NUL", () => userInputSection(server));
    await runSection("bounded input and counted calls", () => boundsSection(server, double));
    await runSection("output safety", () => outputSafetySection(server, double));
    await runSection("SIGKILL during a run", () => killDuringRun(server, double, sizes.killRunConversations, visibilitySeconds));
    await runSection("SIGKILL during a generation", () => killDuringGeneration(server, double, visibilitySeconds));
    await runSection("SIGKILL during an import", () => killDuringImport(server, sizes.killImportConversations, sizes.killImportDelays));
    await runSection("SIGTERM during a run", () => sigtermDuringRun(server, double, graceMs, visibilitySeconds));
  } finally {
    await ownServersDone;
    await server.stop("SIGTERM").catch(() => server.stop("SIGKILL"));
  }
  const closing = Date.now();
  await double.close();
  await store.close();
  console.log(`▸ store closed (${since(closing)})`);

  const passed = Object.values(sections).every((s) => s.passed);
  const report = {
    mode: short ? "short" : "full",
    store: storeKind,
    passed,
    ...(storeDependentOnly ? { not_run_here: Object.fromEntries(Object.entries(storeIndependent).map(([name, why]) => [name, `store-independent: ${why}`])) } : {}),
    started_at: new Date(started).toISOString(),
    duration_ms: Date.now() - started,
    machine: { cpus: os.cpus().length, memory_gb: Math.round(os.totalmem() / 2 ** 30), node: process.version },
    sizes,
    sections,
  };
  // One report per store, so `npm test`'s PostgreSQL pass does not overwrite the SQLite one.
  const reportFile = storeKind === "postgres" ? "reliability-report-postgres.json" : "reliability-report.json";
  fs.writeFileSync(reportFile, JSON.stringify(report, null, 2));
  console.log(`\n${passed ? "✓" : "✗"} reliability ${report.mode} on ${storeKind === "postgres" ? "PostgreSQL" : "SQLite"}: ${Object.values(sections).filter((s) => s.passed).length}/${Object.keys(sections).length} sections passed — ${reportFile}`);
  process.exit(passed ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
