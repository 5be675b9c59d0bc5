import { json, route } from "@/lib/api/route";
import { createTargetBody } from "@/lib/schemas/targets";
import { createTarget, listTargets } from "@/lib/targets";

export const dynamic = "force-dynamic";

/** The targets (agents or models a generation sends conversations to); header values are never shown, a URL's credentials only to admins. */
export const GET = route({ handler: async ({ caller }) => json(await listTargets(caller)) });

export const POST = route({ body: createTargetBody, handler: async ({ body, caller }) => json(await createTarget(body, caller), { status: 201 }) });
