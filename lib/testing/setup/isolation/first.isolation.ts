// See ./shared.ts: run by ../isolation.test.ts, one of two files in one worker process.
import { it } from "vitest";
import { checkAndLeave } from "./shared";

it("starts with the worker's environment, fresh modules and empty process state", () => checkAndLeave("first"));
