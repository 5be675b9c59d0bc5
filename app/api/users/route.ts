import { json, route } from "@/lib/api/route";
import { createUser, listUsers } from "@/lib/auth";
import { createUserBody } from "@/lib/schemas/users";

export const dynamic = "force-dynamic";

/** The team's people with their keys (never the keys themselves). Admins only. */
export const GET = route({ role: "admin", handler: async () => json(await listUsers()) });

/** Add a person with a role. Admins only (anyone while no credential is configured). */
export const POST = route({ role: "admin", body: createUserBody, handler: async ({ body }) => json(await createUser(body), { status: 201 }) });
