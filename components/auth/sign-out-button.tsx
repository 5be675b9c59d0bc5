"use client";

import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";

/** Shown only when the server asks for sign-in and this browser is signed in; ends the session. */
export function SignOutButton() {
  const router = useRouter();
  const [show, setShow] = useState(false);
  useEffect(() => {
    let live = true;
    fetch("/api/session", { cache: "no-store" })
      .then((r) => (r.ok ? r.json() : null))
      .then((s: { auth_required?: boolean; signed_in?: boolean } | null) => live && setShow(Boolean(s?.auth_required && s.signed_in)))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, []);
  if (!show) return null;
  return (
    <button
      type="button"
      className="ml-auto rounded-md px-3 py-1.5 text-sm text-slate-600 hover:bg-slate-100 hover:text-slate-900"
      onClick={async () => {
        await fetch("/api/session", { method: "DELETE" });
        router.replace("/signin");
        router.refresh();
      }}
    >
      Sign out
    </button>
  );
}
