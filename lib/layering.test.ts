// test-stores: no-store (the import strings below are fixtures written to a temporary tree; nothing here opens the store)
// The domain stays below the web and module folders import one way (issue 23): the ESLint rule and the
// import-cycle check (scripts/check-imports.mjs, run by `npm run lint`) each fail on a deliberate
// violation and pass on a clean one. `npm run lint` runs both over the whole tree.
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ESLint } from "eslint";
import { afterAll, describe, expect, it } from "vitest";
import { checkImports, findImportCycles, moduleOf } from "@/scripts/check-imports.mjs";

const root = path.resolve(import.meta.dirname, "..");

describe("lint rule: lib/ and db/ never import the web", () => {
  const eslint = new ESLint({ cwd: root });
  const restricted = async (filePath: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath: path.join(root, filePath) });
    return result.messages.filter((m) => m.ruleId === "no-restricted-imports").map((m) => m.message);
  };

  it("refuses lib/api and next's server modules in a domain module and in a repository", async () => {
    expect(await restricted("lib/runner/violation.ts", 'import { json } from "@/lib/api/route";\nexport const answer = json;\n')).toEqual([
      expect.stringContaining("move the HTTP piece into lib/api"),
    ]);
    expect(await restricted("lib/runner/violation.ts", 'import { sseResponse } from "../api/sse";\nexport const answer = sseResponse;\n')).toHaveLength(1);
    expect(await restricted("db/repositories/violation.ts", 'import { notFound } from "next/navigation";\nexport const gone = notFound;\n')).toEqual([
      expect.stringContaining("belong in lib/api"),
    ]);
    expect(await restricted("lib/import/violation.ts", 'import { NextResponse } from "next/server";\nexport const r = NextResponse;\n')).toHaveLength(1);
  }, 60_000);

  it("lets the domain import the domain, and lib/api and tests import the web", async () => {
    expect(await restricted("lib/runner/fine.ts", 'import { AppError } from "@/lib/errors";\nexport const E = AppError;\n')).toEqual([]);
    expect(await restricted("lib/api/fine.ts", 'import { notFound } from "next/navigation";\nimport { json } from "./route";\nexport const a = [notFound, json];\n')).toEqual([]);
    expect(await restricted("lib/runner/fine.test.ts", 'import { GET } from "@/app/api/datasets/route";\nexport const g = GET;\n')).toEqual([]);
  }, 60_000);
});

describe("import-cycle check", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  /** A throwaway tree of files under lib/ with a tsconfig, as the check reads the project. */
  const tree = (files: Record<string, string>) => {
    const dir = mkdtempSync(path.join(tmpdir(), "turnscope-cycles-"));
    dirs.push(dir);
    writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { baseUrl: ".", paths: { "@/*": ["./*"] } } }));
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    return dir;
  };

  it("names a circle between two module folders even when no file imports itself", async () => {
    const baseDir = tree({
      "lib/checks/types.ts": 'import type { Step } from "@/lib/metrics/transcript";\nexport type Check = { step: Step };\n',
      "lib/metrics/transcript.ts": "export type Step = { id: number };\n",
      "lib/metrics/definition.ts": 'import type { Check } from "../checks/types";\nexport type Def = { check: Check };\n',
    });
    const { files, folders } = await findImportCycles({ baseDir, roots: ["lib"] });
    expect(files).toEqual([]);
    expect(folders).toEqual([
      {
        modules: ["lib/checks", "lib/metrics"],
        imports: ["lib/checks/types.ts -> lib/metrics/transcript.ts", "lib/metrics/definition.ts -> lib/checks/types.ts"],
      },
    ]);
  }, 60_000);

  it("names a circle between files, and passes a tree whose imports point one way", async () => {
    const circular = tree({
      "lib/runner/a.ts": 'import { b } from "./b";\nexport const a = () => b();\n',
      "lib/runner/b.ts": 'import { a } from "./a";\nexport const b = () => a();\n',
    });
    expect((await findImportCycles({ baseDir: circular, roots: ["lib"] })).files).toEqual([["lib/runner/a.ts", "lib/runner/b.ts"]]);
    const oneWay = tree({
      "lib/errors.ts": "export class AppError extends Error {}\n",
      "lib/runner/run.ts": 'import { AppError } from "@/lib/errors";\nimport { save } from "@/db/repositories/results";\nexport const run = () => save(new AppError());\n',
      "db/repositories/results.ts": 'import { AppError } from "@/lib/errors";\nexport const save = (e: AppError) => e;\n',
      // Tests may import anything: they are not part of the folder graph.
      "db/repositories/results.test.ts": 'import { run } from "@/lib/runner/run";\nexport const t = run;\n',
    });
    expect(await findImportCycles({ baseDir: oneWay, roots: ["lib", "db"] })).toEqual({ files: [], folders: [] });
  }, 60_000);

  it("refuses product code that imports test support (bench/, lib/testing/, a test), and lets test support import the product", async () => {
    const baseDir = tree({
      "lib/runner/run.ts": 'import { seed } from "@/lib/testing/seed/rows";\nexport const run = () => seed();\n',
      "lib/testing/seed/rows.ts": 'import { save } from "@/db/repositories/results";\nexport const seed = () => save();\n',
      "db/repositories/results.ts": 'import { model } from "../../bench/support/model";\nexport const save = () => model;\n',
      "bench/support/model.ts": "export const model = 1;\n",
      "app/page.tsx": 'import { helper } from "@/lib/runner/run.test";\nexport default function Page() { return helper; }\n',
      "lib/runner/run.test.ts": 'import { run } from "./run";\nexport const helper = run;\n',
      "bench/runner.bench.ts": 'import { run } from "@/lib/runner/run";\nimport { seed } from "@/lib/testing/seed/rows";\nexport const b = [run, seed];\n',
    });
    const { upward } = await checkImports({ baseDir, roots: ["app", "lib", "db", "bench"] });
    expect(upward).toEqual([
      "app/page.tsx -> lib/runner/run.test.ts",
      "db/repositories/results.ts -> bench/support/model.ts",
      "lib/runner/run.ts -> lib/testing/seed/rows.ts",
    ]);
    const clean = tree({
      "lib/runner/run.ts": "export const run = () => 1;\n",
      "lib/testing/seed/rows.ts": 'import { run } from "@/lib/runner/run";\nexport const seed = () => run();\n',
      "bench/runner.bench.ts": 'import { run } from "@/lib/runner/run";\nimport { seed } from "@/lib/testing/seed/rows";\nexport const b = [run, seed];\n',
    });
    expect((await checkImports({ baseDir: clean, roots: ["lib", "bench"] })).upward).toEqual([]);
  }, 60_000);

  // This project's own tree (the house drawing's upward arrows at 0) is checked by scripts/check-imports.mjs itself: `npm test`'s
  // "Import cycles" step and `npm run lint` fail on any upward import. The tests above show that the check finds one.

  it("keeps every benchmark in bench/, where `npm run bench` (scripts/bench.ts) finds them", () => {
    const benches = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "*.bench.ts"], { cwd: root, encoding: "utf8" }).split("\n").filter(Boolean);
    expect(benches.length).toBeGreaterThan(0);
    expect(benches.filter((f) => !f.startsWith("bench/"))).toEqual([]);
  });

  it("groups files into modules: lib/<folder>, a single lib file, db/repositories, and the store (db, its dialects included)", () => {
    expect([moduleOf("lib/runner/run.ts"), moduleOf("lib/errors.ts"), moduleOf("db/repositories/x.ts"), moduleOf("db/store.ts"), moduleOf("db/dialect/pg.ts")]).toEqual([
      "lib/runner",
      "lib/errors",
      "db/repositories",
      "db",
      "db",
    ]);
  });
});
