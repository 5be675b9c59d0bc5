import { json, route } from "@/lib/api/route";
import { previewJudgePrompt } from "@/lib/metrics/metrics";
import { previewBody } from "@/lib/schemas/metrics";

export const POST = route({
  body: previewBody,
  handler: async ({ body }) => json(await previewJudgePrompt(body)),
});
