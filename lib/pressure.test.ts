import { describe, expect, it } from "vitest";
import { noteRequest, underPressure, yieldToRequests } from "./pressure";

const block = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // a run's synchronous work holding the loop
  }
};
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("readers first", () => {
  it("holds a run back only while many requests arrive and the loop is behind, and never for long", async () => {
    noteRequest();
    // A busy loop with one request now and then (a page polling) is not pressure.
    for (let i = 0; i < 6; i++) {
      block(30);
      await tick(0);
    }
    expect(underPressure()).toBe(false);
    // A crowd of requests while the loop lags is.
    for (let i = 0; i < 6; i++) {
      for (let k = 0; k < 4; k++) noteRequest();
      block(30);
      await tick(1);
    }
    for (let k = 0; k < 4; k++) noteRequest();
    expect(underPressure()).toBe(true);
    const t = performance.now();
    await yieldToRequests();
    const held = performance.now() - t;
    expect(held).toBeGreaterThan(5);
    expect(held).toBeLessThan(400); // at most ~100 ms, with room for a slow machine
    // The crowd gone and the loop idle: no pressure left.
    await tick(400);
    expect(underPressure()).toBe(false);
  });
});
