import { json, route } from "@/lib/api/route";
import { cancelComparison } from "@/lib/comparisons";
import { idParams } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

export const POST = route({ params: idParams, handler: async ({ params }) => json(await cancelComparison(params.id)) });
