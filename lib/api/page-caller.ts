/** Who is looking at a server-rendered page: the same identity the API would see for this browser. */
import "server-only";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { authRequired, callerForSession, type Caller } from "@/lib/auth";
import { callerForSecret } from "@/lib/auth/identify";
import { SESSION_COOKIE, bearerOf } from "./session";

/** The page's caller, or null without a live credential (the sign-in page); never redirects. */
export async function currentPageCaller(): Promise<Caller | null> {
  // The request is read first: that makes every page using this dynamic, so `next build` never asks the store.
  const bearer = bearerOf((await headers()).get("authorization"));
  const session = (await cookies()).get(SESSION_COOKIE)?.value;
  if (!(await authRequired())) return { userId: "default", role: "admin", via: "open" };
  const caller = bearer !== undefined ? await callerForSecret(bearer) : session ? await callerForSession(session) : undefined;
  return caller ?? null;
}

/** The page's caller; without a live credential (the proxy normally catches that first) to the sign-in page. */
export async function pageCaller(): Promise<Caller> {
  const caller = await currentPageCaller();
  if (!caller) redirect("/signin");
  return caller;
}
