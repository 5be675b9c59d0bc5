// test-stores: no-store
import { describe, expect, it } from "vitest";
import { viewTotal } from "./use-grid-data";

const page = (total: number, estimated = false) => ({ items: [], total, estimated });

describe("viewTotal: the grid's row count from its loaded pages", () => {
  it("takes an exact total over any estimate, and the largest estimate while none is exact", () => {
    expect(viewTotal([], 7)).toBe(7);
    expect(viewTotal([undefined], 7)).toBe(7);
    expect(viewTotal([page(120)], 0)).toBe(120);
    // A far page's estimate (at least the rows up to it plus one) lets scrolling go on past the first estimate.
    expect(viewTotal([page(51, true), undefined, page(151, true)], 0)).toBe(151);
    // A short page ends the list: its exact total wins, even below an estimate.
    expect(viewTotal([page(400, true), page(173)], 0)).toBe(173);
  });
});
