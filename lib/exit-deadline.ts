/**
 * The latest a stopping process may take: a drain that waits on a store that went away (its
 * connections neither answer nor fail), or a connection that never closes, must not keep a process
 * alive after SIGTERM. Seen: a server whose PostgreSQL cluster was stopped under it while it drained
 * ignored further signals and spun at two thirds of a core for 40 minutes.
 */
import { log } from "@/lib/log";

/** How long after the grace period a stopping process may take to close its stores before it exits anyway. */
export const SHUTDOWN_EXIT_MARGIN_MS = 5_000;

/** Exit with status 1 if this process is still here `graceMs` + SHUTDOWN_EXIT_MARGIN_MS from now. */
export function exitByDeadline(graceMs: number, what: string): void {
  const ms = graceMs + SHUTDOWN_EXIT_MARGIN_MS;
  setTimeout(() => {
    log.error(`${what} did not end in time: exiting now`, { after_ms: ms });
    process.exit(1);
  }, ms).unref();
}
