import { json, route } from "@/lib/api/route";
import { listMetricVersions } from "@/lib/metrics/metrics";
import { idParams } from "@/lib/schemas/common";

export const GET = route({
  params: idParams,
  handler: ({ params }) => json(listMetricVersions(params.id)),
});
