"use client";

import { useRouter } from "next/navigation";
import { useCaller } from "@/components/caller-context";

/**
 * Shown only when the server asks for sign-in and this browser is signed in: who, and a button that ends the
 * session. Who comes from the page's render (the root layout), so it follows a sign-in made on the page
 * itself, such as the People page's first admin key, as soon as the page refreshes.
 */
export function SignOutButton() {
  const router = useRouter();
  const who = useCaller();
  if (!who || who.via === "open") return null;
  return (
    <div className="ml-auto flex items-center gap-2 text-sm text-slate-500">
      <span data-testid="signed-in-as">
        {who.user} · {who.role}
      </span>
      <button
        type="button"
        className="rounded-md px-3 py-1.5 text-sm text-slate-600 hover:bg-slate-100 hover:text-slate-900"
        onClick={async () => {
          await fetch("/api/session", { method: "DELETE" });
          router.replace("/signin");
          router.refresh();
        }}
      >
        Sign out
      </button>
    </div>
  );
}
