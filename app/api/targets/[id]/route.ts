import { json, noContent, route, zodDetails } from "@/lib/api/route";
import { AppError } from "@/lib/errors";
import { idParams } from "@/lib/schemas/common";
import { createTargetBody, updateTargetBody } from "@/lib/schemas/targets";
import { deleteTarget, getTargetRow, toTargetWire, updateTarget } from "@/lib/targets";

export const dynamic = "force-dynamic";

export const GET = route({ params: idParams, handler: async ({ params }) => json(toTargetWire(await getTargetRow(params.id))) });

export const PATCH = route({
  params: idParams,
  body: updateTargetBody,
  handler: async ({ params, body }) =>
    json(
      await updateTarget(params.id, body, (merged) => {
        const parsed = createTargetBody.safeParse(merged);
        if (!parsed.success) throw new AppError("unprocessable", `The target would be invalid: ${parsed.error.issues[0]?.message ?? "invalid"}`, zodDetails(parsed.error));
        return parsed.data;
      }),
    ),
});

export const DELETE = route({
  params: idParams,
  handler: async ({ params }) => {
    await deleteTarget(params.id);
    return noContent();
  },
});
