import { describe, expect, it } from "vitest";
import { DEFAULT_RUN_SETTINGS, readSavedRunSettings, runSettingsKey } from "./use-run-settings";

const storage = (items: Record<string, string>) => ({ getItem: (k: string) => items[k] ?? null });

describe("run settings kept per dataset", () => {
  it("start async with a batch that keeps a provider busy", () => {
    expect(DEFAULT_RUN_SETTINGS).toEqual({ mode: "async", batchSize: 32, model: "" });
  });

  it("are read back per dataset key, and invalid parts fall back to the defaults", () => {
    const s = storage({
      [runSettingsKey(3)]: JSON.stringify({ mode: "sync", batchSize: 4, model: "gpt-x" }),
      [runSettingsKey(4)]: JSON.stringify({ mode: "fast", batchSize: 999, model: 7 }),
      [runSettingsKey(5)]: "{not json",
    });
    expect(readSavedRunSettings(s, runSettingsKey(3))).toEqual({ mode: "sync", batchSize: 4, model: "gpt-x" });
    expect(readSavedRunSettings(s, runSettingsKey(4))).toEqual({ mode: "async", batchSize: 32, model: "" });
    expect(readSavedRunSettings(s, runSettingsKey(5))).toBeNull();
    expect(readSavedRunSettings(s, runSettingsKey(6))).toBeNull();
  });
});
