/**
 * db/schema.pg.ts must stay the PostgreSQL twin of db/schema.ts. The type half of this file is checked
 * by `tsc --noEmit -p .` (expectTypeOf does nothing at run time); the run-time half compares what
 * drizzle knows of each table: columns, types, defaults, indexes, foreign keys and checks.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { getTableName, is, SQL, Table, type InferInsertModel, type InferSelectModel } from "drizzle-orm";
import { getTableConfig as getPgTableConfig, PgDialect, PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as getSqliteTableConfig, SQLiteSyncDialect, SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as pg from "./schema.pg";
import * as sqlite from "./schema";

/** Every exported table of a schema module with its row types, keyed by export name. */
type Rows<M> = {
  [K in keyof M as M[K] extends Table ? K : never]: M[K] extends Table
    ? { select: InferSelectModel<M[K]>; insert: InferInsertModel<M[K]> }
    : never;
};

describe("schema.pg.ts types", () => {
  it("has the same tables under the same export names with identical select and insert types", () => {
    expectTypeOf<Rows<typeof pg>>().toEqualTypeOf<Rows<typeof sqlite>>();
  });

  // One line per table as well, so a mismatch names its table instead of printing both schemas.
  it("matches table by table", () => {
    expectTypeOf<typeof pg.datasetsTable.$inferSelect>().toEqualTypeOf<typeof sqlite.datasetsTable.$inferSelect>();
    expectTypeOf<typeof pg.datasetsTable.$inferInsert>().toEqualTypeOf<typeof sqlite.datasetsTable.$inferInsert>();
    expectTypeOf<typeof pg.conversationsTable.$inferSelect>().toEqualTypeOf<typeof sqlite.conversationsTable.$inferSelect>();
    expectTypeOf<typeof pg.conversationsTable.$inferInsert>().toEqualTypeOf<typeof sqlite.conversationsTable.$inferInsert>();
    expectTypeOf<typeof pg.messagesTable.$inferSelect>().toEqualTypeOf<typeof sqlite.messagesTable.$inferSelect>();
    expectTypeOf<typeof pg.messagesTable.$inferInsert>().toEqualTypeOf<typeof sqlite.messagesTable.$inferInsert>();
    expectTypeOf<typeof pg.stepsTable.$inferSelect>().toEqualTypeOf<typeof sqlite.stepsTable.$inferSelect>();
    expectTypeOf<typeof pg.stepsTable.$inferInsert>().toEqualTypeOf<typeof sqlite.stepsTable.$inferInsert>();
    expectTypeOf<typeof pg.metricTemplatesTable.$inferSelect>().toEqualTypeOf<typeof sqlite.metricTemplatesTable.$inferSelect>();
    expectTypeOf<typeof pg.metricTemplatesTable.$inferInsert>().toEqualTypeOf<typeof sqlite.metricTemplatesTable.$inferInsert>();
    expectTypeOf<typeof pg.evaluationPipelinesTable.$inferSelect>().toEqualTypeOf<
      typeof sqlite.evaluationPipelinesTable.$inferSelect
    >();
    expectTypeOf<typeof pg.evaluationPipelinesTable.$inferInsert>().toEqualTypeOf<
      typeof sqlite.evaluationPipelinesTable.$inferInsert
    >();
    expectTypeOf<typeof pg.pipelineNodesTable.$inferSelect>().toEqualTypeOf<typeof sqlite.pipelineNodesTable.$inferSelect>();
    expectTypeOf<typeof pg.pipelineNodesTable.$inferInsert>().toEqualTypeOf<typeof sqlite.pipelineNodesTable.$inferInsert>();
    expectTypeOf<typeof pg.pipelineExecutionsTable.$inferSelect>().toEqualTypeOf<
      typeof sqlite.pipelineExecutionsTable.$inferSelect
    >();
    expectTypeOf<typeof pg.pipelineExecutionsTable.$inferInsert>().toEqualTypeOf<
      typeof sqlite.pipelineExecutionsTable.$inferInsert
    >();
    expectTypeOf<typeof pg.evaluationResultsTable.$inferSelect>().toEqualTypeOf<
      typeof sqlite.evaluationResultsTable.$inferSelect
    >();
    expectTypeOf<typeof pg.evaluationResultsTable.$inferInsert>().toEqualTypeOf<
      typeof sqlite.evaluationResultsTable.$inferInsert
    >();
    expectTypeOf<typeof pg.judgeCacheTable.$inferSelect>().toEqualTypeOf<typeof sqlite.judgeCacheTable.$inferSelect>();
    expectTypeOf<typeof pg.judgeCacheTable.$inferInsert>().toEqualTypeOf<typeof sqlite.judgeCacheTable.$inferInsert>();
    expectTypeOf<typeof pg.labelsTable.$inferSelect>().toEqualTypeOf<typeof sqlite.labelsTable.$inferSelect>();
    expectTypeOf<typeof pg.labelsTable.$inferInsert>().toEqualTypeOf<typeof sqlite.labelsTable.$inferInsert>();
    expectTypeOf<typeof pg.metricPromptVersionsTable.$inferSelect>().toEqualTypeOf<
      typeof sqlite.metricPromptVersionsTable.$inferSelect
    >();
    expectTypeOf<typeof pg.metricPromptVersionsTable.$inferInsert>().toEqualTypeOf<
      typeof sqlite.metricPromptVersionsTable.$inferInsert
    >();
    expectTypeOf<typeof pg.importIdempotencyKeysTable.$inferSelect>().toEqualTypeOf<
      typeof sqlite.importIdempotencyKeysTable.$inferSelect
    >();
    expectTypeOf<typeof pg.importIdempotencyKeysTable.$inferInsert>().toEqualTypeOf<
      typeof sqlite.importIdempotencyKeysTable.$inferInsert
    >();
    expectTypeOf<typeof pg.savedMappingsTable.$inferSelect>().toEqualTypeOf<typeof sqlite.savedMappingsTable.$inferSelect>();
    expectTypeOf<typeof pg.savedMappingsTable.$inferInsert>().toEqualTypeOf<typeof sqlite.savedMappingsTable.$inferInsert>();
  });

  it("exports the same row types", () => {
    expectTypeOf<pg.DatasetRow>().toEqualTypeOf<sqlite.DatasetRow>();
    expectTypeOf<pg.PipelineNodeRow>().toEqualTypeOf<sqlite.PipelineNodeRow>();
    expectTypeOf<pg.EvaluationResultRow>().toEqualTypeOf<sqlite.EvaluationResultRow>();
    expectTypeOf<pg.SavedMappingRow>().toEqualTypeOf<sqlite.SavedMappingRow>();
  });
});

/** What a column must agree on across the two stores, in dialect-neutral words. */
type ColumnShape = {
  name: string;
  kind: string;
  notNull: boolean;
  primaryKey: boolean;
  hasDefault: boolean;
  /** A literal default as is; an SQL default read back to what it means ("now as ISO text", a JSON value). */
  default: unknown;
  enumValues: readonly string[] | undefined;
};

type TableShape = {
  name: string;
  columns: Record<string, ColumnShape>;
  indexes: Array<{ name: string; unique: boolean; columns: string[] }>;
  foreignKeys: Array<{ columns: string[]; table: string; foreignColumns: string[]; onDelete: string | undefined }>;
  checks: string[];
};

type AnyTableConfig = ReturnType<typeof getPgTableConfig> | ReturnType<typeof getSqliteTableConfig>;

/** The type a column holds, named the same for both dialects: number, string, boolean or json. */
function columnKind(column: AnyTableConfig["columns"][number]): string {
  return column.dataType;
}

const pgDialect = new PgDialect();
const sqliteDialect = new SQLiteSyncDialect();
const nowIsoDefaults = [
  "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
  `to_char(statement_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
];

function defaultMeaning(column: AnyTableConfig["columns"][number]): unknown {
  if (!is(column.default, SQL)) return column.default;
  const text = (is(column.table, PgTable) ? pgDialect : sqliteDialect).sqlToQuery(column.default).sql;
  if (nowIsoDefaults.includes(text)) return "<now as ISO 8601 UTC text>";
  const literal = /^'(.*)'(::json)?$/.exec(text);
  if (literal) return JSON.parse(literal[1]) as unknown;
  return `<unrecognised SQL default: ${text}>`;
}

function indexColumns(cols: readonly unknown[]): string[] {
  return cols.map((c) => (typeof c === "object" && c !== null && "name" in c ? String(c.name) : "<expression>"));
}

function shape(config: AnyTableConfig): TableShape {
  const columns: Record<string, ColumnShape> = {};
  for (const c of config.columns) {
    columns[c.name] = {
      name: c.name,
      kind: columnKind(c),
      notNull: c.notNull,
      primaryKey: c.primary,
      // An identity fills the id as SQLite's rowid does; both make the column optional on insert.
      hasDefault: c.hasDefault || c.primary,
      default: defaultMeaning(c),
      enumValues: c.enumValues && c.enumValues.length > 0 ? c.enumValues : undefined,
    };
  }
  const indexes = config.indexes
    .map((i) => ({ name: i.config.name ?? "", unique: i.config.unique, columns: indexColumns(i.config.columns) }))
    .sort((a, b) => a.name.localeCompare(b.name));
  const foreignKeys = config.foreignKeys
    .map((fk) => {
      const ref = fk.reference();
      return {
        columns: ref.columns.map((c) => c.name),
        table: getTableName(ref.foreignTable),
        foreignColumns: ref.foreignColumns.map((c) => c.name),
        onDelete: fk.onDelete,
      };
    })
    .sort((a, b) => a.columns.join().localeCompare(b.columns.join()));
  const checks = config.checks.map((c) => c.name).sort();
  return { name: config.name, columns, indexes, foreignKeys, checks };
}

const sqliteTables = Object.entries(sqlite as Record<string, unknown>).flatMap(([name, value]) =>
  is(value, SQLiteTable) ? [[name, value] as const] : [],
);
const pgTables = Object.entries(pg as Record<string, unknown>).flatMap(([name, value]) =>
  is(value, PgTable) ? [[name, value] as const] : [],
);

describe("schema.pg.ts at run time", () => {
  it("exports a table for every table of schema.ts, under the same name", () => {
    expect(sqliteTables.length).toBeGreaterThan(10);
    expect(pgTables.map(([name]) => name).sort()).toEqual(sqliteTables.map(([name]) => name).sort());
  });

  it.each(sqliteTables.map(([exportName]) => exportName))("%s: same columns, indexes, foreign keys and checks", (exportName) => {
    const sqliteTable = sqliteTables.find(([n]) => n === exportName)![1];
    const pgTable = pgTables.find(([n]) => n === exportName)?.[1];
    expect(pgTable, `schema.pg.ts lacks ${exportName}`).toBeDefined();
    expect(shape(getPgTableConfig(pgTable!))).toEqual(shape(getSqliteTableConfig(sqliteTable)));
  });

  it("compares something real: a differing column is noticed", () => {
    const a = shape(getSqliteTableConfig(sqlite.datasetsTable));
    const b = shape(getPgTableConfig(pg.conversationsTable));
    expect(b).not.toEqual(a);
    // Defaults: the ISO timestamp default is present on both sides, JSON columns read as json.
    expect(shape(getPgTableConfig(pg.conversationsTable)).columns.meta.kind).toBe("json");
    expect(shape(getPgTableConfig(pg.conversationsTable)).columns.created_at.default).toBe("<now as ISO 8601 UTC text>");
    expect(shape(getPgTableConfig(pg.pipelineNodesTable)).columns.depends_on.default).toEqual([]);
  });
});

describe("db/migrations-pg", () => {
  it("is what drizzle-kit generates from the current schema.pg.ts (nothing left to migrate)", () => {
    // Generate into a copy, so a stale folder fails here instead of gaining a file.
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-migrations-pg-"));
    try {
      fs.cpSync(path.join(process.cwd(), "db", "migrations-pg"), copy, { recursive: true });
      const before = fs.readdirSync(copy).sort();
      const res = spawnSync(
        path.join(process.cwd(), "node_modules", ".bin", "drizzle-kit"),
        // drizzle-kit prefixes --out with "./": give it a path relative to the project.
        ["generate", "--dialect", "postgresql", "--schema", "./db/schema.pg.ts", "--out", path.relative(process.cwd(), copy)],
        { encoding: "utf8", timeout: 60_000 },
      );
      expect(res.status, res.stderr).toBe(0);
      expect(res.stdout, "run: npx drizzle-kit generate --config drizzle.pg.config.ts --name <short_name>").toContain(
        "No schema changes",
      );
      expect(fs.readdirSync(copy).sort()).toEqual(before);
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  }, 60_000);
});
