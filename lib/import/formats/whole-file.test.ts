/**
 * The whole-file adapters' registry (whole-file.ts): no real file or fixture is read by two readers, so
 * the readers' order decides nothing for any file we know, and each file is read by the reader of the
 * format the import names. Real files from ../shared/realdata when present (skipped, saying so, when not).
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { importFormats } from "@/lib/schemas/imports";
import { realdataAbsentMessage, realdataDir, realdataPresent } from "@/lib/testing/realdata/files";
import { parseUpload } from "../parse";
import { formatPlaces, normaliseUpload } from ".";
import { wholeFileClaimants, wholeFileReaders } from "./whole-file";

const readable = (name: string) => /\.(json|jsonl|traj)$/.test(name);
const filesOf = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter(readable).sort().map((name) => path.join(dir, name)) : []);
const fixtures = [...filesOf(path.resolve(process.cwd(), "../shared/fixtures")), ...filesOf(path.resolve(process.cwd(), "e2e/fixtures/formats"))];

function claims(file: string): { claimants: string[]; format: string | undefined } {
  const parsed = parseUpload(fs.readFileSync(file, "utf8"));
  if (!parsed.ok) return { claimants: [], format: undefined };
  return { claimants: wholeFileClaimants(parsed), format: normaliseUpload(parsed).format };
}

/** Each file read by at most one reader, and that reader names the format the import reports. */
function expectOneReaderEach(files: string[]) {
  const twice: string[] = [];
  const misnamed: string[] = [];
  for (const file of files) {
    const { claimants, format } = claims(file);
    if (claimants.length > 1) twice.push(`${path.basename(file)}: ${claimants.join(", ")}`);
    const reader = wholeFileReaders.find((r) => r.name === claimants[0]);
    if (reader && !reader.formats.includes(format as never)) misnamed.push(`${path.basename(file)}: read by ${reader.name}, named ${format}`);
  }
  expect(twice).toEqual([]);
  expect(misnamed).toEqual([]);
}

describe("whole-file readers", () => {
  it("name exactly the formats the import's list places in whole files, each reader once", () => {
    for (const reader of wholeFileReaders) for (const format of reader.formats) expect(importFormats).toContain(format);
    const named = wholeFileReaders.flatMap((r) => r.formats).sort();
    const placed = Object.entries(formatPlaces).filter(([, place]) => place === "whole file").map(([format]) => format).sort();
    expect(named).toEqual(placed);
    expect(new Set(wholeFileReaders.map((r) => r.name)).size).toBe(wholeFileReaders.length);
  });

  it("no fixture is read by two readers", () => {
    expect(fixtures.length).toBeGreaterThan(10);
    expectOneReaderEach(fixtures);
    // The whole-file fixtures are read by one reader each (a test that can fail: a fixture of theirs unread would show here).
    const read = fixtures.filter((f) => claims(f).claimants.length === 1).map((f) => path.basename(f));
    expect(read).toEqual(expect.arrayContaining(["atif-trajectory.json", "codex-rollout.jsonl", "langsmith-run-tree.json", "openhands-events.json", "smolagents-run.jsonl", "tau2-results.json"]));
  });

  it.skipIf(!realdataPresent)(realdataPresent ? "no real file is read by two readers" : `no real file is read by two readers — ${realdataAbsentMessage}`, () => {
    const files = filesOf(realdataDir);
    expect(files.length).toBeGreaterThan(5);
    expectOneReaderEach(files);
  });
});
