// The two *.isolation.ts files in one worker process, as the main config runs store files: see ../isolation.test.ts.
import path from "node:path";
import { defineConfig } from "vitest/config";

const root = path.join(import.meta.dirname, "..", "..", "..", "..");
export default defineConfig({
  root,
  resolve: { alias: { "@": root, "server-only": path.join(root, "lib/testing/setup/server-only-stub.ts") } },
  test: {
    include: ["lib/testing/setup/isolation/*.isolation.ts"],
    setupFiles: ["lib/testing/setup/vitest-setup.ts"],
    environment: "node",
    pool: "forks",
    isolate: false,
    maxWorkers: 1,
    env: { TEST_STORE: "none" },
  },
});
