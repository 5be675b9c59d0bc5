import { json, route } from "@/lib/api/route";
import { createMetric, listMetrics } from "@/lib/metrics/metrics";
import { createMetricBody, listMetricsQuery } from "@/lib/schemas/metrics";

export const GET = route({
  query: listMetricsQuery,
  handler: ({ query }) => json(listMetrics(query.dataset_id)),
});

export const POST = route({
  body: createMetricBody,
  handler: ({ body, userId }) => json(createMetric(body, userId), { status: 201 }),
});
