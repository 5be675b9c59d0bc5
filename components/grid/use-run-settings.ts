"use client";

import { useCallback, useEffect, useState } from "react";
import type { RunSettings } from "./types";

const KEY = "turnscope.run-settings";
export const MAX_BATCH_SIZE = 256;
const DEFAULTS: RunSettings = { mode: "sync", batchSize: 8, model: "" };

/** What was saved, if it is still a valid setting; anything else falls back to the defaults. */
function readSaved(): RunSettings | null {
  try {
    const raw: unknown = JSON.parse(window.localStorage.getItem(KEY) ?? "null");
    if (!raw || typeof raw !== "object") return null;
    const r = raw as Record<string, unknown>;
    const mode = r.mode === "async" || r.mode === "sync" ? r.mode : DEFAULTS.mode;
    const size = typeof r.batchSize === "number" && Number.isInteger(r.batchSize) && r.batchSize >= 1 && r.batchSize <= MAX_BATCH_SIZE ? r.batchSize : DEFAULTS.batchSize;
    return { mode, batchSize: size, model: typeof r.model === "string" ? r.model : "" };
  } catch {
    return null; // storage blocked or garbage: the defaults
  }
}

/**
 * The toolbar's run settings, kept in this browser across reloads and datasets. Read after mount so the
 * server render and the first client render agree.
 */
export function useRunSettings(): [RunSettings, (s: RunSettings) => void] {
  const [settings, setSettings] = useState<RunSettings>(DEFAULTS);
  useEffect(() => {
    const saved = readSaved();
    // eslint-disable-next-line react-hooks/set-state-in-effect -- localStorage exists only after mount
    if (saved) setSettings(saved);
  }, []);
  const update = useCallback((s: RunSettings) => {
    setSettings(s);
    try {
      window.localStorage.setItem(KEY, JSON.stringify(s));
    } catch {
      // private mode or full storage: the setting still holds for this page
    }
  }, []);
  return [settings, update];
}
