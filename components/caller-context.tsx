"use client";

import { createContext, useContext, type ReactNode } from "react";
import { roleAllows, type Role } from "@/lib/auth/roles";

/** Who is looking at the page, as the server saw them when it rendered it (null on the sign-in page). */
export type PageCaller = { user: string; role: Role; via: "open" | "token" | "key" | "session" };

const CallerContext = createContext<PageCaller | null>(null);

export function CallerProvider({ caller, children }: { caller: PageCaller | null; children: ReactNode }) {
  return <CallerContext.Provider value={caller}>{children}</CallerContext.Provider>;
}

/** The page's caller, or null where nobody is signed in. */
export function useCaller(): PageCaller | null {
  return useContext(CallerContext);
}

/**
 * Whether the caller may do what needs `needed` (default: annotator, the role that writes), and if not, a
 * sentence saying why — the title of a disabled control, so a viewer learns the rule before a 403 does.
 */
export function useAccess(needed: Role = "annotator"): { allowed: boolean; why: string | undefined } {
  const caller = useCaller();
  if (!caller) return { allowed: true, why: undefined };
  if (roleAllows(caller.role, needed)) return { allowed: true, why: undefined };
  return { allowed: false, why: `Needs the ${needed} role: you are signed in as ${caller.user}, ${caller.role === "admin" ? "an" : "a"} ${caller.role}` };
}
