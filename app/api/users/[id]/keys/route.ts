import { json, route } from "@/lib/api/route";
import { notCrossSite } from "@/lib/api/session";
import { sessionCookieForNewKey } from "@/lib/api/sign-in";
import { createKey } from "@/lib/auth";
import { idParams } from "@/lib/schemas/common";
import { createKeyBody } from "@/lib/schemas/users";

/**
 * A new API key for this person: the key is in this answer only. Admins only. Made from the one-person mode it
 * is the team's first key (an admin's): the answer also signs its creator in with it, so the page that made it
 * keeps working once every request needs a credential.
 */
export const POST = route({
  role: "admin",
  params: idParams,
  body: createKeyBody,
  handler: async ({ params, body, caller, req }) => {
    const created = await createKey(params.id, body.name);
    const headers = new Headers({ "cache-control": "no-store" });
    if (caller.via === "open" && notCrossSite(req)) headers.set("set-cookie", await sessionCookieForNewKey(req, created.key));
    return json(created, { status: 201, headers });
  },
});
