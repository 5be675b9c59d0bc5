/**
 * Vitest global setup of the PostgreSQL project (TEST_STORE=postgres or both, vitest.config.mts): one
 * throwaway cluster for the whole run (scripts/pg-test-server.mjs), or the one TEST_PG_ADMIN_URL names, and
 * in it one database migrated once. Each test file then gets its own database cloned from that template
 * (lib/testing/setup/vitest-setup.ts: CREATE DATABASE … TEMPLATE, a file copy instead of running every
 * migration again), as each SQLite test file gets its own file.
 */
import pg from "pg";
import type { TestProject } from "vitest/node";
import { migratePg } from "@/db/pg";
import { startPgTestServer, type PgTestServer } from "@/scripts/pg-test-server.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    /** The cluster's admin URL (its `turnscope` database); each test file creates its database through it. */
    pgAdminUrl: string;
    /** The migrated database each test file's database is a copy of. */
    pgTemplate: string;
  }
}

let cluster: PgTestServer | undefined;
let template: { admin: string; name: string } | undefined;

async function adminQuery(adminUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export async function setup(project: TestProject): Promise<void> {
  let adminUrl = process.env.TEST_PG_ADMIN_URL;
  if (!adminUrl) {
    cluster = await startPgTestServer();
    // Through the unix socket: the PostgreSQL files are most of the suite's queries, and a query over the
    // socket costs the client a third less CPU than over TCP (docs/testing.md). The servers the browser and
    // reliability suites start connect over TCP, as a deployment does.
    adminUrl = cluster.socketUrl;
  }
  // Named after this process, so runs sharing a cluster of TEST_PG_ADMIN_URL do not meet.
  const name = `template_${process.pid}`;
  await adminQuery(adminUrl, `drop database if exists ${name} with (force)`);
  await adminQuery(adminUrl, `create database ${name}`);
  template = { admin: adminUrl, name };
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  // The migrator's connection is closed when it returns: CREATE DATABASE … TEMPLATE needs the template idle.
  await migratePg(url.toString());
  project.provide("pgAdminUrl", adminUrl);
  project.provide("pgTemplate", name);
}

export async function teardown(): Promise<void> {
  if (cluster) await cluster.stop();
  else if (template) await adminQuery(template.admin, `drop database if exists ${template.name} with (force)`);
}
