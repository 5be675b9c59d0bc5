/**
 * Fields inside JSON columns (conversation and message `meta`, a step's tool call), in the SQL of the
 * store this process runs on: each dialect spells them its own way (db/dialect) and both give the
 * repositories the same answers.
 */
import "server-only";
import { dialect } from "../dialect";

export const {
  /** The field as JSON text (objects and arrays included), null when absent. */
  fieldText: jsonFieldText,
  /** The field as a comparable SQL value for filters and sorting: numbers as numbers, strings as text. */
  fieldValue: jsonFieldValue,
  /** The field's value and SQLite-style JSON type; read rows back through `fromJsonField`. */
  field: jsonField,
  /** A step's tool name: the `name` of a `{name, arguments}` tool call object, else null. */
  toolName: toolNameSql,
  /** The distinct top-level keys of the JSON objects in a column, for one dataset's conversations. */
  objectKeys: objectKeysSql,
  /** `column in (the integers of a JSON array)`: a list of ids as one parameter, so the SQL is prepared once. */
  inIntegers: inJsonIntegers,
  /** `inJsonIntegers` for hand-written SQL (rawRows): `column ${IN_JSON_INTEGERS}` with the JSON text bound to its `?`. */
  inIntegersSql: IN_JSON_INTEGERS,
} = dialect.json;

/** A row read with `jsonField`, with the value as SQLite gives it. */
export const fromJsonField: typeof dialect.json.fromField = (row) => dialect.json.fromField(row);

/** A JSON column as read by raw SQL: text on SQLite, already parsed on PostgreSQL; null stays null. */
export const jsonColumn = <T = unknown>(v: unknown): T | null => (v === null || v === undefined ? null : ((typeof v === "string" ? JSON.parse(v) : v) as T));
