import { json, route } from "@/lib/api/route";
import { getAlignment } from "@/lib/align";
import { idParams } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

export const GET = route({ params: idParams, handler: async ({ params }) => json(await getAlignment(params.id)) });
