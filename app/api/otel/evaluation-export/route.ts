import { json, route } from "@/lib/api/route";
import { evaluationExportCounts } from "@/lib/otel/export";

export const dynamic = "force-dynamic";

/** What this process has sent back onto the traces (OTEL_EVALUATION_ENDPOINT): queued, exported, failed, dropped, skipped cells. */
export const GET = route({ handler: async () => json(evaluationExportCounts()) });
