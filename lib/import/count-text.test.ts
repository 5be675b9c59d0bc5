import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countText } from "./count-text";

describe("countText", () => {
  it("writes an integer as toLocaleString('en-US') does", () => {
    for (const n of [0, 1, 12, 999, 1000, 1863, 44000, 999999, 1000000, 1234567890, -1, -1000, -1234567, Number.MAX_SAFE_INTEGER]) {
      expect(countText(n)).toBe(n.toLocaleString("en-US"));
    }
    fc.assert(fc.property(fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }), (n) => countText(n) === n.toLocaleString("en-US")));
  });

  it("leaves fractions, -0 and integers past 2^53 to toLocaleString", () => {
    for (const n of [1.5, 1234.5678, -0, 2 ** 60, Infinity, NaN]) expect(countText(n)).toBe(n.toLocaleString("en-US"));
  });
});
