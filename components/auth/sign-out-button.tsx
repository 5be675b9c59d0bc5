"use client";

import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";

/** Shown only when the server asks for sign-in and this browser is signed in: who, and a button that ends the session. */
export function SignOutButton() {
  const router = useRouter();
  const [who, setWho] = useState<{ user: string; role: string } | null>(null);
  useEffect(() => {
    let live = true;
    fetch("/api/session", { cache: "no-store" })
      .then((r) => (r.ok ? r.json() : null))
      .then((s: { auth_required?: boolean; signed_in?: boolean; user?: string; role?: string } | null) => {
        if (live && s?.auth_required && s.signed_in && s.user) setWho({ user: s.user, role: s.role ?? "" });
      })
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, []);
  if (!who) return null;
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
