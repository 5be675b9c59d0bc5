import { json, route } from "@/lib/api/route";
import { createMetric, listMetrics } from "@/lib/metrics/metrics";
import { createMetricBody, listMetricsQuery } from "@/lib/schemas/metrics";

export const GET = route({
  query: listMetricsQuery,
  handler: async ({ query }) => json(await listMetrics(query.dataset_id)),
});

export const POST = route({
  body: createMetricBody,
  handler: async ({ body, userId }) => json(await createMetric(body, userId), { status: 201 }),
});
