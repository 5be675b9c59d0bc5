import { json, route } from "@/lib/api/route";
import { getComparison } from "@/lib/comparisons";
import { idParams } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

export const GET = route({ params: idParams, handler: async ({ params }) => json(await getComparison(params.id)) });
