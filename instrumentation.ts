/**
 * Runs once when the server starts: open and migrate the database, then mark executions a dead
 * server left running as interrupted, before the first request.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { getDb } = await import("@/db/client");
  getDb();
  const { recoverInterruptedExecutions } = await import("@/lib/runner");
  recoverInterruptedExecutions();
}
