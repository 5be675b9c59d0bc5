import { json, route } from "@/lib/api/route";
import { gateReport } from "@/lib/gate";
import { gateQuery } from "@/lib/schemas/gate";

export const dynamic = "force-dynamic";

/** The CI gate's verdict over finished runs: thresholds, regressions against a baseline, every case. */
export const GET = route({ query: gateQuery, handler: async ({ query }) => json(await gateReport(query)) });
