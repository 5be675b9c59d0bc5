import { json, route } from "@/lib/api/route";
import { createKey } from "@/lib/auth";
import { idParams } from "@/lib/schemas/common";
import { createKeyBody } from "@/lib/schemas/users";

/** A new API key for this person: the key is in this answer only. Admins only. */
export const POST = route({
  role: "admin",
  params: idParams,
  body: createKeyBody,
  handler: async ({ params, body }) => json(await createKey(params.id, body.name), { status: 201, headers: { "cache-control": "no-store" } }),
});
