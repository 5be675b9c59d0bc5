/** Runs once when the server starts: open and migrate the database before the first request. */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // Registers the seeding of system templates, which runs right after the migrations.
  await import("@/lib/metrics/templates");
  const { getDb } = await import("@/db/client");
  getDb();
}
