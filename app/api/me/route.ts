import { json, route } from "@/lib/api/route";
import { authRequired } from "@/lib/auth";

export const dynamic = "force-dynamic";

/** Who the caller is: user id, role and how they signed in. */
export const GET = route({
  handler: async ({ caller }) => json({ user: caller.userId, role: caller.role, via: caller.via, auth_required: await authRequired() }, { headers: { "cache-control": "no-store" } }),
});
