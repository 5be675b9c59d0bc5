/**
 * A PostgreSQL session of its own (not a pool's): for the work that needs one connection for a while —
 * the migrator's and the queue set-up's session advisory locks.
 *
 * node-postgres emits "error" on a client whose server ends the session while no query is out on it (a
 * restart, an administrator's pg_terminate_backend, DROP DATABASE … WITH (FORCE)); with no listener that
 * is an uncaught exception, and the whole process goes down. With this one, the session is lost, it says
 * so in the log, and the next statement on it fails, so only the work that owned it does.
 */
import pg from "pg";
import { log } from "@/lib/log";

export function sessionClient(url: string, applicationName: string): pg.Client {
  const client = new pg.Client({ connectionString: url, application_name: applicationName });
  client.on("error", (err) => log.warn("PostgreSQL session lost", { session: applicationName, err }));
  return client;
}
