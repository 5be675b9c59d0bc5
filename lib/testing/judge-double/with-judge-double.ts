/**
 * Vitest hooks for a test file that judges through the judge test double: one double for the file,
 * reset with an empty verdict cache before each test, the app configured to call it.
 */
import { afterAll, beforeAll, beforeEach } from "vitest";
import { clearJudgeCache } from "@/db/repositories/judge";
import { resetConfig } from "@/lib/config";
import { startJudgeDouble, type JudgeDouble } from "./server";

/** Returns a getter for the file's double; `env` is applied before each test (e.g. JUDGE_MAX_RETRIES). */
export function withJudgeDouble(env: Record<string, string> = {}): () => JudgeDouble {
  let double: JudgeDouble | undefined;
  beforeAll(async () => {
    double = await startJudgeDouble();
  });
  afterAll(async () => {
    for (const key of ["OPENAI_BASE_URL", ...Object.keys(env)]) delete process.env[key];
    resetConfig();
    await double?.close();
  });
  beforeEach(async () => {
    double!.reset();
    await clearJudgeCache();
    Object.assign(process.env, env, { OPENAI_BASE_URL: double!.baseURL });
    resetConfig();
  });
  return () => double!;
}
