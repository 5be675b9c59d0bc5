import { json, noContent, route, zodDetails } from "@/lib/api/route";
import { AppError } from "@/lib/errors";
import { idParams } from "@/lib/schemas/common";
import { createTargetBody, updateTargetBody } from "@/lib/schemas/targets";
import { deleteTarget, getTargetRow, toTargetWire, updateTarget } from "@/lib/targets";

export const dynamic = "force-dynamic";

export const GET = route({ params: idParams, handler: async ({ params, caller }) => json(toTargetWire(await getTargetRow(params.id), caller)) });

export const PATCH = route({
  params: idParams,
  body: updateTargetBody,
  handler: async ({ params, body, caller }) =>
    json(
      await updateTarget(params.id, body, caller, (merged) => {
        const parsed = createTargetBody.safeParse(merged);
        if (!parsed.success) throw new AppError("unprocessable", `The target would be invalid: ${parsed.error.issues[0]?.message ?? "invalid"}`, zodDetails(parsed.error));
        return parsed.data;
      }),
    ),
});

export const DELETE = route({
  params: idParams,
  handler: async ({ params, caller }) => {
    await deleteTarget(params.id, caller);
    return noContent();
  },
});
