import { json, route } from "@/lib/api/route";
import { setUserRole } from "@/lib/auth";
import { idParams } from "@/lib/schemas/common";
import { updateUserBody } from "@/lib/schemas/users";

/** Change a person's role (applies at once, to their open sessions too). Admins only. */
export const PATCH = route({ role: "admin", params: idParams, body: updateUserBody, handler: async ({ params, body }) => json(await setUserRole(params.id, body.role)) });
