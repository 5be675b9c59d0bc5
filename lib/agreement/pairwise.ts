/**
 * Pairwise verdicts (issue 38.5), pure: each pair of replies is judged twice, a first (verdict_ab: the
 * judge's pick with a shown as A) and b first (verdict_ba: with b shown as A). A reply wins only when the
 * judge picks it in both orders; a verdict that flips with the order is a tie, so position bias shows up
 * as ties instead of as wins for whichever side happened to be shown first.
 */
import { wilsonInterval, type Interval } from "./stats";

/** What the judge picked, by position: the reply shown first (A), second (B), or neither. */
export type Position = "A" | "B" | "tie";
/** Which side won the pair once both orders are read. */
export type Outcome = "a" | "b" | "tie";

/** The pair's outcome from its two verdicts. */
export function pairOutcome(ab: Position, ba: Position): Outcome {
  if (ab === "A" && ba === "B") return "a";
  if (ab === "B" && ba === "A") return "b";
  return "tie";
}

/** Whether the two orders name the same reply (or both say tie). */
export function isConsistent(ab: Position, ba: Position): boolean {
  return (ab === "A" && ba === "B") || (ab === "B" && ba === "A") || (ab === "tie" && ba === "tie");
}

export type PairwiseFigures = {
  pairs: number;
  wins_a: number;
  wins_b: number;
  ties: number;
  /** a's share of the pairs, a tie counting half; Wilson 95% interval over the pairs. */
  win_rate_a: { estimate: number | null; interval: Interval | null };
  /** Share of pairs whose two verdicts agree once the order is undone. */
  consistency: number | null;
  /** Of the verdicts that picked a reply (not tie), the share that picked the one shown first: 0.5 is no position bias. */
  first_position_rate: number | null;
};

/** Win/tie/loss, consistency and position bias over pairs judged in both orders. */
export function pairwiseFigures(pairs: ReadonlyArray<{ ab: Position; ba: Position }>): PairwiseFigures {
  let winsA = 0;
  let winsB = 0;
  let ties = 0;
  let consistent = 0;
  let picks = 0;
  let firstPicks = 0;
  for (const { ab, ba } of pairs) {
    const outcome = pairOutcome(ab, ba);
    if (outcome === "a") winsA++;
    else if (outcome === "b") winsB++;
    else ties++;
    if (isConsistent(ab, ba)) consistent++;
    for (const v of [ab, ba]) {
      if (v === "tie") continue;
      picks++;
      if (v === "A") firstPicks++;
    }
  }
  const n = pairs.length;
  const k = winsA + ties / 2;
  return {
    pairs: n,
    wins_a: winsA,
    wins_b: winsB,
    ties,
    win_rate_a: { estimate: n ? k / n : null, interval: wilsonInterval(k, n) },
    consistency: n ? consistent / n : null,
    first_position_rate: picks ? firstPicks / picks : null,
  };
}
