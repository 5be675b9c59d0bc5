import { json, route } from "@/lib/api/route";
import { judgeSettings } from "@/lib/judge";

export const dynamic = "force-dynamic";

export const GET = route({ handler: () => json(judgeSettings()) });
