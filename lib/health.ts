import "server-only";
import { pingDatabase } from "@/db/repositories/health";
import { getConfig } from "@/lib/config";
import { maskedUrl } from "@/lib/judge/config";
import { version } from "@/lib/version";

/**
 * What `GET /api/health` reports: never the key, only whether a judge is configured. A caller without a
 * credential on a locked server (a load balancer's probe) gets status, database and version only.
 */
export async function checkHealth(withJudge: boolean) {
  const config = getConfig();
  const database = await pingDatabase() ? "ok" : "unreachable";
  return {
    status: database === "ok" ? ("ok" as const) : ("degraded" as const),
    database,
    ...(withJudge
      ? {
          judge: {
            configured: Boolean(config.OPENAI_BASE_URL || config.OPENAI_API_KEY),
            base_url: maskedUrl(config.OPENAI_BASE_URL) ?? null,
            default_model: config.JUDGE_MODEL,
          },
        }
      : {}),
    version,
  };
}
