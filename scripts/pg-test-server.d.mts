/** Types of scripts/pg-test-server.mjs for the TypeScript tests and scripts that import it. */
export const testServersDir: string;
export class PgBinariesMissingError extends Error {}
export type PgTestServer = {
  /** postgres://postgres@127.0.0.1:<port>/<database> (trust authentication, 127.0.0.1 only). */
  url: string;
  /**
   * The same database through the server's unix socket (postgres://postgres@localhost:<port>/<database>?host=<socket
   * dir>): node-postgres takes the `host` parameter as the socket's directory. Cheaper per query than TCP.
   */
  socketUrl: string;
  host: string;
  port: number;
  database: string;
  /** The test server's directory under .pg/, removed by stop(). */
  dir: string;
  /** Stop the server and remove its directory. Also happens on exit and on SIGINT/SIGTERM/SIGHUP. */
  stop(): Promise<void>;
};
/** The directory holding initdb, pg_ctl and postgres, or null when PostgreSQL is not installed. */
export function findPgBinDir(): string | null;
export function startPgTestServer(options?: { database?: string }): Promise<PgTestServer>;
export function stopTestServerDir(dir: string): void;
export function stopAllPgTestServers(): number;
