import { json, noContent, route } from "@/lib/api/route";
import { deleteMetric, getMetric, updateMetric } from "@/lib/metrics/metrics";
import { idParams } from "@/lib/schemas/common";
import { updateMetricBody } from "@/lib/schemas/metrics";

export const GET = route({
  params: idParams,
  handler: async ({ params }) => json(await getMetric(params.id)),
});

export const PATCH = route({
  params: idParams,
  body: updateMetricBody,
  handler: async ({ params, body }) => json(await updateMetric(params.id, body)),
});

export const DELETE = route({
  params: idParams,
  handler: async ({ params }) => {
    await deleteMetric(params.id);
    return noContent();
  },
});
