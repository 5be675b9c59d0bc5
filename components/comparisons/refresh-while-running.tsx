"use client";

import { useRouter } from "next/navigation";
import { useEffect } from "react";

/** Re-reads the page every 2 s while the comparison is being judged (the server renders the figures). */
export function RefreshWhileRunning() {
  const router = useRouter();
  useEffect(() => {
    const timer = setInterval(() => router.refresh(), 2000);
    return () => clearInterval(timer);
  }, [router]);
  return <p className="mt-1 text-xs text-slate-500">Judging… this page updates by itself.</p>;
}
