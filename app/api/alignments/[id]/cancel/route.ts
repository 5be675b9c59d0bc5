import { json, route } from "@/lib/api/route";
import { cancelAlignment } from "@/lib/align";
import { idParams } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

export const POST = route({ params: idParams, handler: async ({ params }) => json(await cancelAlignment(params.id)) });
