import { json, route } from "@/lib/api/route";
import { conversationGoal } from "@/lib/metrics/conversation-goal";
import { idParams } from "@/lib/schemas/common";
import { goalBody } from "@/lib/schemas/goal";

export const dynamic = "force-dynamic";

/** The stored goal, or the first user message while none is stored; never a model call. */
export const GET = route({
  params: idParams,
  handler: async ({ params }) => json(await conversationGoal(params.id, { extract: false })),
});

/** Extract the goal with the judge model (again, with `refresh`, the default) and store it. */
export const POST = route({
  params: idParams,
  body: goalBody.optional().default({ refresh: true }),
  handler: async ({ params, body }) =>
    json(await conversationGoal(params.id, { extract: true, refresh: body.refresh, model: body.model_name })),
});
