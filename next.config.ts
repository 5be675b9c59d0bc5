import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // better-sqlite3 is a native addon: load it from node_modules at run time, never bundle it.
  // exceljs (and archiver under it) is plain Node code with dynamic requires: loaded as is, not bundled.
  // undici (the judge's HTTP client, lib/judge/http-fetch.ts) is Node's own HTTP engine: loaded as is.
  // pg-boss (the PostgreSQL job queue of lib/cluster) is plain Node code that opens its own connections: loaded as is.
  serverExternalPackages: ["better-sqlite3", "exceljs", "undici", "pg-boss"],
  poweredByHeader: false,
  // Turbopack's build cache, except where scripts/project.mjs builds a clone for the first time (TURNSCOPE_BUILD_CACHE=0).
  experimental: { turbopackFileSystemCacheForBuild: process.env.TURNSCOPE_BUILD_CACHE !== "0" },
  // The build's type check: every file, tests and scripts included (tsconfig.json), when npm test builds
  // (scripts/project.mjs sets TURNSCOPE_TYPECHECK=all); none for `npm start` (TURNSCOPE_TYPECHECK=none:
  // serving does not need it, and npm test checks every file), else the product only (tsconfig.build.json).
  typescript: {
    tsconfigPath: process.env.TURNSCOPE_TYPECHECK === "all" ? "tsconfig.json" : "tsconfig.build.json",
    ignoreBuildErrors: process.env.TURNSCOPE_TYPECHECK === "none",
  },
  // Compressing every API response costs CPU the runner and other readers need; a reverse proxy in
  // front can compress for slow links, and SSE streams must not be buffered by a compressor anyway.
  compress: false,
  // The datasets list is the home page; /datasets (what people type, and what the dataset pages' paths
  // suggest) goes there instead of a 404. Not permanent: a browser must not cache it for good.
  async redirects() {
    return [{ source: "/datasets", destination: "/", permanent: false }];
  },
};

export default nextConfig;
