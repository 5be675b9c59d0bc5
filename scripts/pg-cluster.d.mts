/** Types of scripts/pg-cluster.mjs for the TypeScript tests and scripts that import it. */
export const clustersDir: string;
export class PgBinariesMissingError extends Error {}
export type PgCluster = {
  /** postgres://postgres@127.0.0.1:<port>/<database> (trust authentication, 127.0.0.1 only). */
  url: string;
  host: string;
  port: number;
  database: string;
  /** The cluster's directory under .pg/, removed by stop(). */
  dir: string;
  /** Stop the server and remove its directory. Also happens on exit and on SIGINT/SIGTERM/SIGHUP. */
  stop(): Promise<void>;
};
/** The directory holding initdb, pg_ctl and postgres, or null when PostgreSQL is not installed. */
export function findPgBinDir(): string | null;
export function startPgCluster(options?: { database?: string }): Promise<PgCluster>;
export function stopClusterDir(dir: string): void;
export function stopAllPgClusters(): number;
