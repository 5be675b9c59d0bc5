/**
 * Fields inside JSON columns (conversation and message `meta`, a step's tool call), in the SQL of the
 * store this process runs on. SQLite has json_extract/json_type over `$."a"."b"` paths; PostgreSQL
 * has `#>`/`#>>` over `{a,b}` paths and json_typeof, which names types differently and returns text.
 * Both give the repositories the same answers.
 */
import "server-only";
import { sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { onPostgres } from "../store";

/** `["reward", "total"]` → `$."reward"."total"` (SQLite JSON path). */
export function sqlitePath(keys: string[]): string {
  return "$" + keys.map((k) => `."${k.replace(/"/g, "")}"`).join("");
}

/** `["reward", "total"]` → `{"reward","total"}` (a PostgreSQL text[] literal, sent as a parameter). */
function pgPath(keys: string[]): string {
  return `{${keys.map((k) => `"${k.replace(/["\\]/g, "")}"`).join(",")}}`;
}

/** The field as JSON text (objects and arrays included), null when absent. */
export function jsonFieldText(column: SQLiteColumn, keys: string[]): SQL<string | null> {
  return onPostgres ? sql<string | null>`((${column} #> ${pgPath(keys)}::text[])::text)` : sql<string | null>`(${column} -> ${sqlitePath(keys)})`;
}

/**
 * The field as a comparable SQL value for filters and sorting: numbers as numbers, strings as text.
 * `numeric` picks which: PostgreSQL cannot compare text with numbers, so a number comparison reads
 * only numeric fields and booleans as 1/0 (others are null), as SQLite's ->> gives them; a text
 * comparison reads the field's text.
 */
export function jsonFieldValue(column: SQLiteColumn, keys: string[], numeric: boolean): SQL {
  if (!onPostgres) return sql`(${column} ->> ${sqlitePath(keys)})`;
  const path = pgPath(keys);
  return numeric
    ? sql`(case json_typeof(${column} #> ${path}::text[])
        when 'number' then (${column} #>> ${path}::text[])::double precision
        when 'boolean' then case when ${column} #>> ${path}::text[] = 'true' then 1 else 0 end end)`
    : sql`(${column} #>> ${path}::text[])`;
}

/**
 * The field's value and SQLite-style JSON type (`true`, `false`, `integer`, `real`, `text`, `null`,
 * `object`, `array`; null when absent). On PostgreSQL the value arrives as text and `fromJsonField`
 * turns it into what SQLite gives: numbers as numbers, booleans as 1/0.
 */
export function jsonField(column: SQLiteColumn, keys: string[]): { value: SQL<number | string | null>; jsonType: SQL<string | null> } {
  if (!onPostgres) {
    const path = sqlitePath(keys);
    return {
      value: sql<number | string | null>`case when json_valid(${column}) then json_extract(${column}, ${path}) end`,
      jsonType: sql<string | null>`case when json_valid(${column}) then json_type(${column}, ${path}) end`,
    };
  }
  const path = pgPath(keys);
  const field = sql`(${column} #> ${path}::text[])`;
  return {
    value: sql<string | null>`(case when json_typeof(${field}) in ('object', 'array') then ${field}::text else ${column} #>> ${path}::text[] end)`,
    jsonType: sql<string | null>`(case json_typeof(${field})
      when 'boolean' then ${field}::text
      when 'number' then case when ${field}::text ~ '[.eE]' then 'real' else 'integer' end
      when 'string' then 'text'
      else json_typeof(${field}) end)`,
  };
}

/** A row read with `jsonField`, with the value as SQLite gives it. */
export function fromJsonField<T extends { value: number | string | null; jsonType: string | null }>(row: T): T {
  if (!onPostgres || row.value === null) return row;
  if (row.jsonType === "integer" || row.jsonType === "real") return { ...row, value: Number(row.value) };
  if (row.jsonType === "true" || row.jsonType === "false") return { ...row, value: row.jsonType === "true" ? 1 : 0 };
  return row;
}

/** A step's tool name: the `name` of a `{name, arguments}` tool call object, else null. */
export function toolNameSql(toolCall: SQLiteColumn): SQL<string | null> {
  return onPostgres
    ? sql<string | null>`(case when json_typeof(${toolCall}) = 'object' then ${toolCall} ->> 'name' end)`
    : sql<string | null>`(case when json_valid(${toolCall}) and json_type(${toolCall}) = 'object'
        then cast(json_extract(${toolCall}, '$.name') as text) end)`;
}

/** The distinct top-level keys of the JSON objects in a column, for one dataset's conversations. */
export function objectKeysSql(datasetId: number): SQL {
  return onPostgres
    ? sql`select distinct k as key from conversations c,
          json_object_keys(case when json_typeof(c.meta) = 'object' then c.meta else '{}'::json end) k
          where c.dataset_id = ${datasetId} and c.meta is not null order by 1`
    : sql`select distinct j.key as key from conversations c, json_each(c.meta) j
          where c.dataset_id = ${datasetId} and c.meta is not null and json_valid(c.meta) and json_type(c.meta) = 'object'
          order by j.key`;
}

/**
 * `column in (the integers of a JSON array)`: a list of ids as one parameter (a JSON text such as
 * `[3,5,8]`), so a query's SQL stays the same whatever the list's length and can be prepared once.
 */
export function inJsonIntegers(column: SQLiteColumn, list: SQL.Aliased | SQL | ReturnType<typeof sql.placeholder>): SQL {
  return onPostgres
    ? sql`${column} in (select (value)::integer from json_array_elements_text(cast(${list} as json)))`
    : sql`${column} in (select value from json_each(${list}))`;
}

/** `inJsonIntegers` for hand-written SQL (rawRows): `column ${IN_JSON_INTEGERS}` with the JSON text bound to its `?`. */
export const IN_JSON_INTEGERS = onPostgres
  ? "in (select (value)::integer from json_array_elements_text(cast(? as json)))"
  : "in (select value from json_each(?))";
