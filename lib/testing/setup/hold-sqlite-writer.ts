/**
 * Another connection (as another process, or an import's write thread would) takes SQLite's write lock on
 * `file` and keeps it until `release()`: tests of what waits for SQLite's one writer and what does not.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { Worker } from "node:worker_threads";

export async function holdSqliteWriter(file: string, opts: { forMs?: number } = {}): Promise<{ release(): Promise<void>; released: Promise<void> }> {
  const driver = createRequire(path.join(process.cwd(), "package.json")).resolve("better-sqlite3");
  const holder = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
     const Database = require(workerData.driver);
     const db = new Database(workerData.file, { fileMustExist: true });
     db.exec("BEGIN IMMEDIATE");
     db.prepare("update datasets set updated_at = updated_at where 0").run();
     parentPort.postMessage("holding");
     const release = () => { db.exec("COMMIT"); db.close(); parentPort.postMessage("released"); };
     if (workerData.forMs) setTimeout(release, workerData.forMs);
     else parentPort.once("message", release);`,
    { eval: true, workerData: { file, driver, forMs: opts.forMs } },
  );
  const released = new Promise<void>((resolve, reject) => {
    holder.on("message", (m) => m === "released" && resolve());
    holder.once("error", reject);
  }).then(() => holder.terminate().then(() => undefined));
  await new Promise((resolve, reject) => {
    holder.once("message", resolve);
    holder.once("error", reject);
  });
  return {
    released,
    async release() {
      holder.postMessage("release");
      await released;
    },
  };
}
