import { json, route } from "@/lib/api/route";
import { createRule, listRules } from "@/lib/online";
import { createRuleBody, listRulesQuery } from "@/lib/schemas/online";

export const dynamic = "force-dynamic";

/** Create an online rule: the dataset's live conversations are judged as they finish. */
export const POST = route({
  body: createRuleBody,
  handler: async ({ body, userId }) => json(await createRule(body, userId), { status: 201 }),
});

/** Every rule, or a dataset's (`dataset_id`). */
export const GET = route({
  query: listRulesQuery,
  handler: async ({ query }) => json(await listRules(query.dataset_id)),
});
