/**
 * The server's SQLite connection leaves WAL checkpoints to a thread of its own (db/sqlite-checkpointer.ts):
 * a commit no longer copies the WAL into the database file and waits for the disk on the event loop.
 */
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { until } from "@/lib/testing/setup/until";
import { AUTOCHECKPOINT_BACKSTOP_PAGES } from "./sqlite-checkpointer";
import { checkpointer, closeDb, getDb } from "./sqlite-database";

describe.skipIf(Boolean(process.env.DATABASE_URL))("SQLite checkpoints off the event loop", () => {
  it("the thread copies committed pages into the database file; the writer's own checkpoint is only a backstop", async () => {
    const db = getDb();
    const sqlite = db.$client;
    const file = sqlite.name;
    expect(sqlite.pragma("wal_autocheckpoint", { simple: true })).toBe(AUTOCHECKPOINT_BACKSTOP_PAGES);
    sqlite.exec("create table checkpoint_probe (id integer primary key, body text)");
    // Let the thread catch up with the migrations first, so the file's size below is ours to explain.
    const passes = checkpointer()!.passes;
    await until("two checkpoint passes", () => checkpointer()!.passes > passes + 1);
    const before = fs.statSync(file).size;
    // ~3 MB in one commit: under SQLite's default autocheckpoint (1,000 pages), so without the thread these
    // pages would stay in the WAL and the database file would not grow.
    const insert = sqlite.prepare("insert into checkpoint_probe (body) values (?)");
    sqlite.transaction(() => {
      for (let i = 0; i < 750; i++) insert.run(`${i}`.padEnd(4000, "x"));
    })();
    await until("the database file to hold the committed pages", () => fs.statSync(file).size >= before + 2_900_000);
    expect(checkpointer()!.lastError).toBeNull();
    expect((sqlite.prepare("select count(*) as n from checkpoint_probe").get() as { n: number }).n).toBe(750);
  });

  it("closing the database stops its thread; opening it again starts a new one", async () => {
    getDb();
    const first = checkpointer()!;
    closeDb();
    expect(checkpointer()).toBeNull();
    const stoppedAt = first.passes;
    getDb();
    const second = checkpointer()!;
    expect(second).not.toBe(first);
    await until("the new thread's first pass", () => second.passes > 0);
    // The stopped thread ran at most the pass it was in when told to stop.
    expect(first.passes).toBeLessThanOrEqual(stoppedAt + 1);
  });
});
