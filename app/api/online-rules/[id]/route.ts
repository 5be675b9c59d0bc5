import { json, noContent, route } from "@/lib/api/route";
import { deleteRule, getRule, updateRule } from "@/lib/online";
import { idParams } from "@/lib/schemas/common";
import { updateRuleBody } from "@/lib/schemas/online";

export const dynamic = "force-dynamic";

export const GET = route({
  params: idParams,
  handler: async ({ params }) => json(await getRule(params.id)),
});

/** Change a rule; conversations it already took stay taken (a new sample rate applies to those that finish from now on). */
export const PATCH = route({
  params: idParams,
  body: updateRuleBody,
  handler: async ({ params, body }) => json(await updateRule(params.id, body)),
});

/** Delete a rule; the runs it started and their results stay. */
export const DELETE = route({
  params: idParams,
  handler: async ({ params }) => {
    await deleteRule(params.id);
    return noContent();
  },
});
