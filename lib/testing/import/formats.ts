/**
 * What the import-format tests share: an upload checked as the import endpoints check it (failing the test
 * with the refusal's errors), a fixture of e2e/fixtures/formats read as text, and a stored message's steps
 * named by kind, so a test says in one line what a turn became.
 */
import fs from "node:fs";
import path from "node:path";
import { checkUpload } from "@/lib/import";

/** The upload checked; a refusal fails the test with its errors. */
export function checkFile(text: string) {
  const r = checkUpload(new TextEncoder().encode(text), { maxBytes: 50_000_000 });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r;
}

/** A fixture of e2e/fixtures/formats, as text. */
export const formatFixture = (name: string) => fs.readFileSync(path.join(process.cwd(), "e2e/fixtures/formats", name), "utf8");

/** A stored step, as the tests read it. */
export type Step = { thinking: string | null; toolCall: Record<string, unknown> | null; toolResult: unknown; outputContent: string | null };

/** Each step by kind: `thinking`, `call:<tool>`, `output` (the turn's text) or `result`. */
export const stepKinds = (steps: Step[]) => steps.map((s) => (s.thinking ? "thinking" : s.toolCall ? `call:${String(s.toolCall.name)}` : s.outputContent ? "output" : "result"));
