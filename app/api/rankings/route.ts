import { json, route } from "@/lib/api/route";
import { getRankings } from "@/lib/comparisons/rankings";
import { rankingsQuery } from "@/lib/schemas/comparisons";

export const dynamic = "force-dynamic";

/** Bradley–Terry strengths of the candidates of several comparisons, with bootstrap intervals. */
export const GET = route({ query: rankingsQuery, handler: async ({ query }) => json(await getRankings(query)) });
