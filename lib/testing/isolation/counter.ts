/** Evaluated once per test file when each file gets the app's modules anew (see ../isolation.test.ts). */
export const evaluations = ((globalThis as { __isolationCounter?: number }).__isolationCounter =
  ((globalThis as { __isolationCounter?: number }).__isolationCounter ?? 0) + 1);
export const state: { touchedBy?: string } = {};
