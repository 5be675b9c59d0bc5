"use client";

import { useCallback, useEffect, useState } from "react";
import type { RunSettings } from "./types";

/** Settings are kept per dataset (`<KEY>.<datasetId>`); the key without a dataset is read once as their start. */
const KEY = "turnscope.run-settings";
export const MAX_BATCH_SIZE = 256;
/**
 * Async with 32 judge calls in flight: enough to keep a hosted provider busy while the server saves results
 * (its own ceiling is JUDGE_MAX_CONCURRENCY, 128 by default, and a provider's 429s lower the live limit).
 */
export const DEFAULT_RUN_SETTINGS: RunSettings = { mode: "async", batchSize: 32, model: "" };

export const runSettingsKey = (datasetId: number) => `${KEY}.${datasetId}`;

/** What was saved under a key, if it is still a valid setting; anything else falls back to the defaults. */
export function readSavedRunSettings(storage: Pick<Storage, "getItem">, key: string): RunSettings | null {
  try {
    const raw: unknown = JSON.parse(storage.getItem(key) ?? "null");
    if (!raw || typeof raw !== "object") return null;
    const r = raw as Record<string, unknown>;
    const mode = r.mode === "async" || r.mode === "sync" ? r.mode : DEFAULT_RUN_SETTINGS.mode;
    const size =
      typeof r.batchSize === "number" && Number.isInteger(r.batchSize) && r.batchSize >= 1 && r.batchSize <= MAX_BATCH_SIZE ? r.batchSize : DEFAULT_RUN_SETTINGS.batchSize;
    return { mode, batchSize: size, model: typeof r.model === "string" ? r.model : "" };
  } catch {
    return null; // storage blocked or garbage: the defaults
  }
}

/**
 * The toolbar's run settings for one dataset (mode, batch size, model override), kept in this browser
 * across reloads. Read after mount so the server render and the first client render agree.
 */
export function useRunSettings(datasetId: number): [RunSettings, (s: RunSettings) => void] {
  const [settings, setSettings] = useState<RunSettings>(DEFAULT_RUN_SETTINGS);
  useEffect(() => {
    let saved: RunSettings | null = null;
    try {
      saved = readSavedRunSettings(window.localStorage, runSettingsKey(datasetId)) ?? readSavedRunSettings(window.localStorage, KEY);
    } catch {
      saved = null;
    }
    // eslint-disable-next-line react-hooks/set-state-in-effect -- localStorage exists only after mount
    setSettings(saved ?? DEFAULT_RUN_SETTINGS);
  }, [datasetId]);
  const update = useCallback(
    (s: RunSettings) => {
      setSettings(s);
      try {
        window.localStorage.setItem(runSettingsKey(datasetId), JSON.stringify(s));
      } catch {
        // private mode or full storage: the setting still holds for this page
      }
    },
    [datasetId],
  );
  return [settings, update];
}
