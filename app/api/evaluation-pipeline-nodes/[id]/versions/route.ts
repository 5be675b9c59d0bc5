import { json, route } from "@/lib/api/route";
import { listMetricVersions } from "@/lib/metrics/metrics";
import { idParams } from "@/lib/schemas/common";

export const GET = route({
  params: idParams,
  handler: async ({ params }) => json(await listMetricVersions(params.id)),
});
