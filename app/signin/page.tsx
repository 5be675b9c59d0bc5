import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { safeNextPath } from "@/lib/api/session";
import { authRequired } from "@/lib/auth";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in" };

const messages: Record<string, string> = {
  invalid: "That is not an API key of this server.",
  locked: "Too many failed attempts. Wait a few minutes and try again.",
};

/** The token is entered once here; a plain form post, so it works before any script has loaded. */
export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const next = safeNextPath(typeof params.next === "string" ? params.next : "/");
  if (!(await authRequired())) redirect(next);
  const error = typeof params.error === "string" ? messages[params.error] : undefined;
  return (
    <div className="mx-auto mt-16 max-w-md">
      <Card className="p-6">
        <h1 className="text-xl font-semibold tracking-tight">Sign in to Turnscope</h1>
        <p className="mt-1 text-sm text-slate-500">Enter your API key (an admin creates it on the People page; a single-token setup uses API_TOKEN). This browser stays signed in until the session expires or you sign out.</p>
        <form method="post" action="/api/session" className="mt-5 space-y-4">
          <input type="hidden" name="next" value={next} />
          <label className="block text-sm font-medium text-slate-700">
            API key
            <input
              name="token"
              type="password"
              required
              autoFocus
              autoComplete="current-password"
              aria-invalid={error ? true : undefined}
              aria-describedby={error ? "signin-error" : undefined}
              className="mt-1 block h-10 w-full rounded-md border border-slate-300 px-3 text-sm shadow-sm focus:border-brand-500 focus:outline-none focus:ring-2 focus:ring-brand-500/30"
            />
          </label>
          {error ? (
            <p id="signin-error" role="alert" className="text-sm text-red-600">
              {error}
            </p>
          ) : null}
          <Button type="submit" className="w-full">
            Sign in
          </Button>
        </form>
      </Card>
    </div>
  );
}
