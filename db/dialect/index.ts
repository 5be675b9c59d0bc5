/**
 * The store this process runs on, chosen once from the configuration: PostgreSQL when DATABASE_URL is
 * set (lib/config.ts validates its scheme), SQLite at DATABASE_PATH otherwise. Every difference between
 * the two is a member of the chosen dialect (db/dialect/types.ts); the store is fixed for the life of a
 * process.
 */
import "server-only";
import { getConfig } from "@/lib/config";
import { pgDialect } from "./pg";
import { sqliteDialect } from "./sqlite";
import type { Dialect } from "./types";

export type { Db, Dialect, JsonList, JsonSql, OpenHook, Step, Tables } from "./types";

export const dialect: Dialect = getConfig().DATABASE_URL ? pgDialect : sqliteDialect;
