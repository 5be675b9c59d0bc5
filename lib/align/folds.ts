/**
 * Stratified k-fold assignment for alignment: every class is spread over the folds as evenly as it can
 * be, so a fold scored on held-out cells sees the classes in the proportions of the whole. Seeded, so the
 * same labels and seed give the same folds (a report can be reproduced, and a re-run compares like with like).
 */
import { seededRandom } from "@/lib/agreement/regression";

/** Fisher–Yates with the given generator (a copy; the input is left as it was). */
export function seededShuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * The fold (0…k−1) of each item. Classes are taken in sorted order, each shuffled with the seed, and dealt
 * round-robin with the dealing position carried from one class to the next — fold sizes differ by at most
 * one and each class's counts per fold by at most one.
 */
export function stratifiedFolds<T>(items: readonly T[], classOf: (item: T) => string, k: number, seed: number): number[] {
  if (!Number.isInteger(k) || k < 2) throw new RangeError("folds must be an integer of at least 2");
  const byClass = new Map<string, number[]>();
  items.forEach((item, i) => {
    const c = classOf(item);
    byClass.set(c, [...(byClass.get(c) ?? []), i]);
  });
  const random = seededRandom(seed);
  const fold = new Array<number>(items.length).fill(0);
  let next = 0;
  for (const c of [...byClass.keys()].sort()) {
    for (const i of seededShuffle(byClass.get(c)!, random)) {
      fold[i] = next;
      next = (next + 1) % k;
    }
  }
  return fold;
}
