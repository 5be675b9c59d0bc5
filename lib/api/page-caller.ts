/** Who is looking at a server-rendered page: the same identity the API would see for this browser. */
import "server-only";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { authRequired, callerForSession, type Caller } from "@/lib/auth";
import { callerForSecret } from "@/lib/auth/identify";
import { SESSION_COOKIE, bearerOf } from "./session";

/** The page's caller; without a live credential (the proxy normally catches that first) to the sign-in page. */
export async function pageCaller(): Promise<Caller> {
  if (!(await authRequired())) return { userId: "default", role: "admin", via: "open" };
  const bearer = bearerOf((await headers()).get("authorization"));
  const session = (await cookies()).get(SESSION_COOKIE)?.value;
  const caller = bearer !== undefined ? await callerForSecret(bearer) : session ? await callerForSession(session) : undefined;
  if (!caller) redirect("/signin");
  return caller;
}
