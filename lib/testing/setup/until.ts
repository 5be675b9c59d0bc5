/**
 * Wait until `check` holds, trying every `every` ms; past `timeoutMs`, fail naming what was awaited (and
 * `detail()`, e.g. child processes' stderr). Tests wait on the condition they mean, never a fixed sleep.
 */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000, { every = 20, detail }: { every?: number; detail?: () => string } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${detail ? `\n${detail()}` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, every));
  }
}
