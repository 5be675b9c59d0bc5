/**
 * `fn` over `items`, at most `concurrency` at once. On the first rejection no further item starts; the
 * ones in flight are waited for, and then that first error is thrown. (`Promise.all` over a p-limit
 * would reject at once while the rest of the items went on running, and starting, with nobody waiting
 * for them: a batch handler would return — its worker slot reused — with its cells still being judged.)
 */
import pLimit from "p-limit";

export async function forEachLimited<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
  /** Receives a setter of the concurrency while the items run (raising it starts queued items at once). */
  bind?: (set: (n: number) => void) => void,
): Promise<void> {
  // rejectOnClear: without it the items dropped by clearQueue() would stay pending for good.
  const limit = pLimit({ concurrency, rejectOnClear: true });
  bind?.((n) => (limit.concurrency = Math.max(1, n)));
  let failure: { error: unknown } | null = null;
  await Promise.allSettled(
    items.map((item) =>
      limit(() => fn(item)).catch((error: unknown) => {
        if (failure) return; // a later error, or an item dropped after the first one
        failure = { error };
        limit.clearQueue();
      }),
    ),
  );
  if (failure) throw (failure as { error: unknown }).error;
}
