/**
 * Tests that start separate Node processes (the cluster's workers) bundle the child's TypeScript with
 * esbuild first, so each child starts in a fraction of tsx's time; packages stay external.
 */
import path from "node:path";
import { build } from "esbuild";

/** Bundle `source` (relative to the project) to a file under node_modules/.cache/turnscope; its path. */
export async function bundleTestChild(source: string, format: "esm" | "cjs"): Promise<string> {
  const outfile = path.join(process.cwd(), "node_modules/.cache/turnscope", `${path.basename(source, ".ts")}-${process.pid}.${format === "esm" ? "mjs" : "cjs"}`);
  await build({
    entryPoints: [path.join(process.cwd(), source)],
    outfile,
    bundle: true,
    platform: "node",
    format,
    packages: "external",
    tsconfig: path.join(process.cwd(), "tsconfig.json"),
    logLevel: "warning",
  });
  return outfile;
}
