import { json, route } from "@/lib/api/route";
import { testJudgeConnection } from "@/lib/judge";
import { connectionTestBody } from "@/lib/schemas/settings";

export const POST = route({
  body: connectionTestBody.optional().default({}),
  handler: async ({ body }) => json(await testJudgeConnection(body.model_name)),
});
