import { defineConfig, globalIgnores } from "eslint/config";
import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

export default defineConfig([
  ...nextVitals,
  ...nextTs,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // The domain sits below the web: lib/api maps it to HTTP, never the other way (issue 23).
    files: ["lib/**/*.{ts,tsx,mts}", "db/**/*.{ts,tsx,mts}"],
    // Tests and test support call the routes through the public surface, so they may import the web.
    ignores: ["lib/api/**", "lib/testing/**", "**/*.test.{ts,tsx}", "**/*.bench.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@/lib/api", "@/lib/api/*", "**/lib/api", "**/lib/api/*", "../api", "../api/*", "@/app/*"],
              message: "lib/ and db/ are below the web: move the HTTP piece into lib/api (errors come from @/lib/errors).",
            },
            {
              group: ["next/server", "next/headers", "next/navigation", "next/cache", "next/router"],
              message: "lib/ and db/ are below the web: request/response and page helpers belong in lib/api.",
            },
          ],
        },
      ],
    },
  },
  globalIgnores([".next/**", ".pg/**", "out/**", "build/**", "next-env.d.ts", "test-results/**", "playwright-report/**", "data/**"]),
]);
