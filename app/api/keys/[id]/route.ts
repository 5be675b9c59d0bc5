import { noContent, route } from "@/lib/api/route";
import { revokeKey } from "@/lib/auth";
import { idParams } from "@/lib/schemas/common";

/** Revoke a key: refused at once, and the page sessions signed in with it end. Admins only. */
export const DELETE = route({
  role: "admin",
  params: idParams,
  handler: async ({ params }) => {
    await revokeKey(params.id);
    return noContent();
  },
});
