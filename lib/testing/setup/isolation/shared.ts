/**
 * What the two *.isolation.ts files check and leave behind, run one after the other in one worker process
 * by ../isolation.test.ts: whichever runs second must find nothing the first left.
 */
import { expect } from "vitest";
import { processSingleton } from "@/lib/process-state";

/** A marker left in the environment for the other file to look for (not a setting anybody reads). */
const leftBy = "TURNSCOPE_ISOLATION_LEFT_BY";
/** This module's own state: the other file sees it only if the module was not evaluated again. */
const state: { touchedBy?: string } = {};

export function checkAndLeave(file: string): void {
  expect(process.env[leftBy], "environment").toBeUndefined();
  expect(state.touchedBy, "module state").toBeUndefined();
  expect(processSingleton("isolation.left", () => ({ by: file })).by, "process state").toBe(file);
  process.env[leftBy] = file;
  state.touchedBy = file;
  console.log(`isolation: ${file} ran in process ${process.pid}`);
}
