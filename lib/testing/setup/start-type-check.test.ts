import fs from "node:fs";
import path from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { root } from "@/scripts/project.mjs";

// The first `npm start` waited for a type check after the build (issue 51): serving does not need one,
// and npm test type-checks every file. npm start builds with TURNSCOPE_TYPECHECK=none; npm test with all.
afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

async function typescriptConfig(mode: string) {
  vi.stubEnv("TURNSCOPE_TYPECHECK", mode);
  vi.resetModules();
  return (await import("@/next.config")).default.typescript;
}

it("npm start's build skips the type check; npm test's checks every file; otherwise the product", async () => {
  expect(await typescriptConfig("none")).toMatchObject({ ignoreBuildErrors: true });
  expect(await typescriptConfig("all")).toEqual({ tsconfigPath: "tsconfig.json", ignoreBuildErrors: false });
  expect(await typescriptConfig("product")).toEqual({ tsconfigPath: "tsconfig.build.json", ignoreBuildErrors: false });
  const start = fs.readFileSync(path.join(root, "scripts", "start.mjs"), "utf8");
  expect(start).toMatch(/ensureBuild\(\{ typeCheck: false \}\)/);
});
