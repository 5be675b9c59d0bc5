import "server-only";
import { pingDatabase } from "@/db/repositories/health";
import { getConfig } from "@/lib/config";
import { version } from "@/lib/version";

/** What `GET /api/health` reports: never the key, only whether a judge is configured. */
export async function checkHealth() {
  const config = getConfig();
  const database = await pingDatabase() ? "ok" : "unreachable";
  return {
    status: database === "ok" ? ("ok" as const) : ("degraded" as const),
    database,
    judge: {
      configured: Boolean(config.OPENAI_BASE_URL || config.OPENAI_API_KEY),
      base_url: config.OPENAI_BASE_URL ?? null,
      default_model: config.JUDGE_MODEL,
    },
    version,
  };
}
