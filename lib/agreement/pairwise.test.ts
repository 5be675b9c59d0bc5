/** Pairwise verdicts in both orders and Bradley–Terry strengths, each figure worked by hand. */
import { describe, expect, it } from "vitest";
import { bradleyTerry, connected, fitBradleyTerry, pairOutcome, pairwiseFigures, type Outcome, type Position } from "./index";

describe("pairwise figures", () => {
  it("win rate, consistency and first-position rate, by hand", () => {
    // verdict_ab: the pick with a shown first (as A); verdict_ba: the pick with b shown first.
    //   1  A, B     a picked in both orders     → a wins, consistent; picks: first, second
    //   2  B, A     b picked in both orders     → b wins, consistent; picks: second, first
    //   3  A, A     the first shown, each time  → tie (flips with the order), inconsistent; picks: first, first
    //   4  tie, tie                             → tie, consistent; no picks
    //   5  A, B                                 → a wins, consistent; picks: first, second
    // wins_a 2, wins_b 1, ties 2; win rate (2 + 2/2) / 5 = 0.6; consistency 4/5 = 0.8;
    // picks 8 (pairs 1, 2, 3, 5 × 2), of them first shown 1 + 1 + 2 + 1 = 5 → 5/8 = 0.625.
    // Wilson 95% for 3 of 5 (z = 1.959964, z² = 3.841459): centre 0.6 + 3.841459/10 = 0.984146,
    // spread 1.959964·√(0.24/5 + 3.841459/100) = 0.576157, denominator 1 + 3.841459/5 = 1.768292
    // → [(0.984146 − 0.576157)/1.768292, (0.984146 + 0.576157)/1.768292] = [0.2307, 0.8824].
    const pairs: Array<{ ab: Position; ba: Position }> = [
      { ab: "A", ba: "B" },
      { ab: "B", ba: "A" },
      { ab: "A", ba: "A" },
      { ab: "tie", ba: "tie" },
      { ab: "A", ba: "B" },
    ];
    const f = pairwiseFigures(pairs);
    expect(f).toMatchObject({ pairs: 5, wins_a: 2, wins_b: 1, ties: 2, consistency: 0.8, first_position_rate: 0.625 });
    expect(f.win_rate_a.estimate).toBeCloseTo(0.6, 12);
    expect(f.win_rate_a.interval![0]).toBeCloseTo(0.2307, 4);
    expect(f.win_rate_a.interval![1]).toBeCloseTo(0.8824, 4);
  });

  it("a judge that always picks the first shown: every pair a tie, no consistency, first position always", () => {
    const f = pairwiseFigures(Array.from({ length: 4 }, () => ({ ab: "A" as const, ba: "A" as const })));
    expect(f).toMatchObject({ pairs: 4, wins_a: 0, wins_b: 0, ties: 4, consistency: 0, first_position_rate: 1, win_rate_a: { estimate: 0.5 } });
  });

  it("a verdict that flips with the order is a tie; a reply wins only when picked in both", () => {
    expect(pairOutcome("A", "B")).toBe("a");
    expect(pairOutcome("B", "A")).toBe("b");
    expect(pairOutcome("B", "B")).toBe("tie");
    expect(pairOutcome("A", "tie")).toBe("tie");
    expect(pairwiseFigures([])).toMatchObject({ pairs: 0, win_rate_a: { estimate: null, interval: null }, consistency: null, first_position_rate: null });
  });
});

describe("Bradley–Terry", () => {
  const games = (a: number, b: number, winsA: number, winsB: number, ties = 0) => ({ a, b, outcomes: [...Array(winsA).fill("a"), ...Array(winsB).fill("b"), ...Array(ties).fill("tie")] as Outcome[] });

  it("fits strengths 4 : 2 : 1 from outcomes in exactly those odds", () => {
    // P(i beats j) = s_i/(s_i+s_j): with s = (4, 2, 1)/7, X beats Y 4:2 = 2:1, Y beats Z 2:1, X beats Z 4:1.
    // The likelihood equations W_i = Σ_j n_ij s_i/(s_i+s_j) hold: X 30·4/6 + 50·4/5 = 60 = 20 + 40;
    // Y 30·2/6 + 30·2/3 = 30 = 10 + 20; Z 30·1/3 + 50·1/5 = 20 = 10 + 10. So the fit is 4/7, 2/7, 1/7.
    const contests = [games(0, 1, 20, 10), games(1, 2, 20, 10), games(0, 2, 40, 10)];
    const fitted = bradleyTerry(3, contests, { iterations: 200, seed: 7 });
    expect(fitted.map((f) => f.strength)).toEqual([expect.closeTo(4 / 7, 9), expect.closeTo(2 / 7, 9), expect.closeTo(1 / 7, 9)]);
    fitted.forEach((f) => {
      expect(f.interval[0]).toBeLessThanOrEqual(f.strength);
      expect(f.interval[1]).toBeGreaterThanOrEqual(f.strength);
    });
    // The same seed, the same intervals.
    expect(bradleyTerry(3, contests, { iterations: 200, seed: 7 })).toEqual(fitted);
  });

  it("two candidates: the strength is the win share, a tie half a win to each", () => {
    // a, a, b, tie → a 2.5 of 4 → 0.625.
    const [a, b] = fitBradleyTerry([
      [0, 2.5],
      [1.5, 0],
    ]);
    expect(a).toBeCloseTo(0.625, 9);
    expect(b).toBeCloseTo(0.375, 9);
    expect(bradleyTerry(2, [games(0, 1, 2, 1, 1)], { iterations: 0 })[0].strength).toBeCloseTo(0.625, 9);
  });

  it("knows when the comparisons do not link every candidate", () => {
    expect(connected(3, [games(0, 1, 1, 1)])).toBe(false);
    expect(connected(3, [games(0, 1, 1, 1), games(2, 1, 1, 0)])).toBe(true);
  });
});
