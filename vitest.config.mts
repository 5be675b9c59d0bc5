import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: {
      "@": import.meta.dirname,
      // `server-only` throws outside React server components; tests call server modules directly.
      "server-only": path.join(import.meta.dirname, "lib/testing/server-only-stub.ts"),
    },
  },
  test: {
    include: ["{app,lib,db,components}/**/*.test.{ts,tsx}"],
    environment: "node",
    setupFiles: ["lib/testing/vitest-setup.ts"],
    globalSetup: ["lib/testing/pg-global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
  },
});
