import { json, route } from "@/lib/api/route";
import { createTargetBody } from "@/lib/schemas/targets";
import { createTarget, listTargets } from "@/lib/targets";

export const dynamic = "force-dynamic";

/** The targets (agents or models a generation sends conversations to); header values are never shown. */
export const GET = route({ handler: async () => json(await listTargets()) });

export const POST = route({ body: createTargetBody, handler: async ({ body, userId }) => json(await createTarget(body, userId), { status: 201 }) });
