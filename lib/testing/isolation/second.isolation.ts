// One of two files run one after the other in one worker process by ../isolation.test.ts: whichever runs
// second finds nothing the other left (each leaves the same kinds of things behind).
import { expect, it } from "vitest";
import { processSingleton } from "@/lib/process-state";
import { state } from "./counter";

it("starts with the worker's environment, fresh modules and empty process state", () => {
  expect(process.env.ISOLATION_LEFT_BY).toBeUndefined();
  expect(state.touchedBy).toBeUndefined();
  expect(processSingleton("isolation.left", () => ({ by: "second" })).by).toBe("second");
  process.env.ISOLATION_LEFT_BY = "second";
  state.touchedBy = "second";
  process.env.ISOLATION_FILES = `${process.env.ISOLATION_FILES ?? ""}second,`;
  console.log(`isolation: second ran in process ${process.pid}, module evaluations so far ${(globalThis as { __isolationCounter?: number }).__isolationCounter}`);
});
