/**
 * A worker thread started from a TypeScript entry next to its host module, for code run under tsx or
 * vitest (tests, `npm run worker`, scripts). In the Next.js build each host starts its worker with
 * `new Worker(new URL("./entry.ts", import.meta.url))` written out in its own file, the form the
 * bundler recognises; this is the other half.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

/** Start `entry` (a file name next to the host) through tsx; throws when the host was bundled without it. */
export function sourceWorker(hostUrl: string, hostName: string, entry: string): Worker {
  const here = fileURLToPath(hostUrl);
  const file = path.join(path.dirname(here), entry);
  if (path.basename(here) !== hostName || !fs.existsSync(file)) throw new Error(`${entry} is not next to its host module (bundled without it)`);
  return new Worker(`require("tsx/cjs/api").register(); require(${JSON.stringify(file)});`, { eval: true });
}
