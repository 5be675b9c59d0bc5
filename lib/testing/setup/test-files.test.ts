// test-stores: no-store (its fixtures spell out reads of DATABASE_URL that it does not make)
/**
 * The placing of test files on stores (scripts/test-files.mjs): a file that reaches the store runs on
 * both, one that does not runs once, one that starts its own cluster runs once — found from imports, so
 * a new test file is placed without being registered anywhere.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { classify, groups, testFilesByGroup } from "@/scripts/test-files.mjs";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-test-files-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A test file outside the project whose `@/` imports still resolve to it. */
function testFile(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

describe("which store a test file runs on", () => {
  it("places the project's own files by what they import", () => {
    expect(classify("app/api/health/health.test.ts").group).toBe("store");
    expect(classify("lib/agreement/agreement.test.ts").group).toBe("no-store");
    expect(classify("db/pg.test.ts").group).toBe("own-cluster");
    expect(classify("lib/jobs/cluster.test.ts").group).toBe("own-cluster");
    // Through lib/cluster (PostgreSQL pools and NOTIFY) and by reading DATABASE_URL itself.
    expect(classify("lib/jobs/liveness.test.ts").group).toBe("store");
  });

  it("follows chains of local imports, relative and through @/, static and dynamic", () => {
    testFile("helper.ts", 'export { seedDataset } from "@/lib/testing/seed/rows";\n');
    const viaHelper = classify(testFile("via-helper.test.ts", 'import { seedDataset } from "./helper";\n'));
    expect(viaHelper.group).toBe("store");
    expect(viaHelper.why).toContain("db/store.ts");
    expect(classify(testFile("dynamic.test.ts", 'const { getDb } = await import("@/db/sqlite-database");\n')).group).toBe("store");
    expect(classify(testFile("multi.test.ts", 'import {\n  listDatasets,\n} from "@/db/repositories/datasets";\n')).group).toBe("store");
  });

  it("does not count type-only imports, the schema files, comments or packages", () => {
    const text = [
      "/* import { getDb } from \"@/db/sqlite-database\"; */",
      "// the store (db/store.ts) is not used here",
      'import type { Db } from "@/db/store";',
      'import { datasetsTable } from "@/db/schema";',
      'import * as pgSchema from "@/db/schema.pg";',
      'import { z } from "zod";',
      'import { describe } from "vitest";',
    ].join("\n");
    expect(classify(testFile("pure.test.ts", text)).group).toBe("no-store");
  });

  it("puts a file that reads which store it runs on with the store files", () => {
    expect(classify(testFile("reads.test.ts", "const onPg = Boolean(process.env.DATABASE_URL);\n")).group).toBe("store");
    expect(classify(testFile("mentions.test.ts", "// not for DATABASE_URL users\nconst name = 'DATABASE_URL';\n")).group).toBe("no-store");
  });

  it("lets a file name its group, and refuses a group that does not exist", () => {
    expect(classify(testFile("says.test.ts", "// test-stores: store\nimport { spawn } from \"node:child_process\";\n")).group).toBe("store");
    expect(classify(testFile("says-not.test.ts", '// test-stores: no-store\nimport { getDb } from "@/db/sqlite-database";\n')).group).toBe("no-store");
    expect(() => classify(testFile("typo.test.ts", "// test-stores: postgress\n"))).toThrow(/must be one of store, no-store, own-cluster/);
  });

  it("places every test file of the project in exactly one group, this one included", () => {
    const byGroup = testFilesByGroup();
    const all = groups.flatMap((g) => byGroup[g]);
    expect(new Set(all).size).toBe(all.length);
    expect(all).toContain("lib/testing/setup/test-files.test.ts");
    expect(byGroup["no-store"]).toContain("lib/testing/setup/test-files.test.ts");
    expect(byGroup.store.length).toBeGreaterThan(0);
  });
});
