import { describe, expect, it } from "vitest";
import { dialect } from "./dialect";
import { database, onStoreOpen, rawRows, rows, transaction } from "./store";
import { datasetsTable } from "./tables";

describe("the store", () => {
  it("runs an open hook registered after the store opened before the next query is answered", async () => {
    await database();
    const ran: string[] = [];
    onStoreOpen(async (db) => {
      // The hook's own queries must not wait for the hooks to finish.
      await db.select().from(datasetsTable);
      ran.push("late hook");
    });
    await database();
    expect(ran).toEqual(["late hook"]);
  });

  it("rolls back every statement of a transaction body that throws, on either store", async () => {
    const name = `rollback-${dialect.name}-${Date.now()}`;
    await expect(
      transaction(function* (tx) {
        yield* rows(tx.insert(datasetsTable).values({ name, userId: "u" }).returning());
        throw new Error("half-way");
      }),
    ).rejects.toThrow("half-way");
    expect(await rawRows("select id from datasets where name = ?", [name])).toEqual([]);
  });

  it("plans every PostgreSQL statement for its values, never from a generic plan kept while its tables were small", async (ctx) => {
    if (dialect.name !== "postgres") ctx.skip();
    // Every raw statement is a named prepared one; a generic plan made when otel_spans was empty scanned all of it per rebuild read.
    const settings = await Promise.all([1, 2, 3].map(() => rawRows<{ plan_cache_mode: string }>("show plan_cache_mode")));
    for (const [row] of settings) expect(row.plan_cache_mode).toBe("force_custom_plan");
  });
});
