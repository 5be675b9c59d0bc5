/**
 * Every setting is documented with its default: the service's settings (lib/config.ts) in the README's
 * settings table and in docs/configuration.md, and every variable the test, reliability and bench tools
 * read in docs/configuration.md. Read from the schema and the sources, so a new setting without a row
 * fails here.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { envSchema } from "@/lib/config";

const root = path.resolve(import.meta.dirname, "..");
const read = (file: string) => fs.readFileSync(path.join(root, file), "utf8");

/** Table rows whose first cell names variables (`NAME`): variable → the row's cells. */
function settingRows(markdown: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of markdown.split("\n")) {
    if (!line.startsWith("|")) continue;
    const cells = line.split("|").slice(1, -1).map((c) => c.trim());
    for (const m of (cells[0] ?? "").matchAll(/`([A-Z][A-Z0-9_]+)`/g)) rows.set(m[1], cells);
  }
  return rows;
}

/** Files of the tools around the service: the test runner and its configs, the e2e specs, scripts, benches, test helpers. */
function toolFiles(): string[] {
  const out = ["playwright.config.ts", "vitest.config.mts"];
  const walk = (dir: string, keep: (file: string) => boolean) => {
    const abs = path.join(root, dir);
    if (!fs.existsSync(abs)) return;
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== "node_modules" && !entry.name.startsWith(".")) walk(rel, keep);
      else if (entry.isFile() && /\.(ts|mts|mjs|tsx)$/.test(entry.name) && keep(rel)) out.push(rel);
    }
  };
  walk("scripts", () => true);
  walk("e2e", () => true);
  walk(path.join("lib", "testing"), () => true);
  walk("bench", () => true);
  return out;
}

/** Environment variables a source reads or sets by name (`process.env.X`, `env.X`, `process.env["X"]`). */
function envNames(source: string): string[] {
  const names = new Set<string>();
  for (const m of source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b|\benv\[["']([A-Z][A-Z0-9_]*)["']\]/g)) names.add(m[1] ?? m[2]);
  return [...names];
}

// Read by the operating system or Node.js, not by Turnscope.
// TEST_PARALLEL_INDEX: set by Playwright in each worker (playwright.config.ts reads it to pick the worker's servers).
const notOurs = new Set(["PATH", "HOME", "NODE_ENV", "NODE_OPTIONS", "TEST_PARALLEL_INDEX"]);
/** Product settings read outside lib/config.ts: by `npm start` (scripts/start.mjs) before the server exists. */
const startSettings = ["PORT", "HOSTNAME_BIND", "NEXT_MANUAL_SIG_HANDLE"];

const defaults: Record<string, unknown> = envSchema.parse({});
const configKeys = Object.keys(envSchema.shape);
const readme = settingRows(read("README.md"));
const reference = settingRows(read("docs/configuration.md"));

function expectDocumentedDefault(rows: Map<string, string[]>, key: string, file: string) {
  const row = rows.get(key);
  expect(row, `${key} has no row in ${file}'s settings tables`).toBeDefined();
  const value = defaults[key];
  const defaultCell = row![1] ?? "";
  if (value === undefined) expect(defaultCell, `${key}: default cell in ${file}`).toMatch(/unset/);
  else expect(defaultCell, `${key}: default cell in ${file}`).toContain(`\`${String(value)}\``);
  expect((row![2] ?? "").length, `${key}: meaning in ${file}`).toBeGreaterThan(10);
}

describe("every setting is documented with its default", () => {
  it("reads the schema", () => {
    expect(configKeys).toEqual(expect.arrayContaining(["DATABASE_PATH", "OPENAI_API_KEY", "JUDGE_MODEL", "LOG_LEVEL"]));
    expect(defaults.JUDGE_MODEL).toBe("gpt-4o-mini");
  });

  it.each(configKeys)("%s: a row with its default in the README and in docs/configuration.md", (key) => {
    expectDocumentedDefault(readme, key, "README.md");
    expectDocumentedDefault(reference, key, "docs/configuration.md");
  });

  it.each(startSettings)("%s (npm start): a row in the README and in docs/configuration.md", (key) => {
    expect(readme.get(key), key).toBeDefined();
    expect(reference.get(key), key).toBeDefined();
  });

  it("the README's settings table holds the service's settings only (test and bench settings live in docs/configuration.md)", () => {
    const product = new Set([...configKeys, ...startSettings]);
    expect([...readme.keys()].filter((k) => !product.has(k))).toEqual([]);
  });

  it("every variable the test, reliability and bench tools read has a row in docs/configuration.md", () => {
    const found = new Map<string, string>();
    for (const file of toolFiles()) for (const name of envNames(read(file))) if (!notOurs.has(name) && !found.has(name)) found.set(name, file);
    // The scan sees the tools' settings at all (a broken pattern would pass everything).
    expect([...found.keys()]).toEqual(expect.arrayContaining(["E2E_PORT", "RELIABILITY_PORT", "BENCH_PORT", "TEST_STORE", "PG_BINDIR"]));
    const missing = [...found].filter(([name]) => !reference.has(name)).map(([name, file]) => `${name} (${file})`);
    expect(missing).toEqual([]);
  });
});
