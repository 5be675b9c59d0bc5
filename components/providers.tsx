"use client";

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { usePathname } from "next/navigation";
import { useState, useSyncExternalStore, type ReactNode } from "react";
import { CallerProvider, type PageCaller } from "./caller-context";

const noChanges = () => () => {};
/** Pages whose forms are plain posts, made to work before any script has loaded (or with none): never inert. */
const worksWithoutScripts = new Set(["/signin"]);

/**
 * React Query for every client component: one client per browser tab. And every form control waits
 * for the page's scripts: a control the server rendered is inert until React hydrates it — text typed
 * into it is reset to the component's state, a file chosen is dropped, a click or Enter submits the
 * form natively. So until hydration the page's controls sit in a disabled fieldset (one attribute for
 * the whole page; `display: contents`, so it changes no layout), and a keyboard, a mouse or a script
 * driving the page waits the moment it takes instead of losing what it did. The sign-in page is the
 * exception: its form is a plain post that needs no script.
 */
export function Providers({ children, caller }: { children: ReactNode; caller: PageCaller | null }) {
  const [client] = useState(
    () => new QueryClient({ defaultOptions: { queries: { staleTime: 5_000, refetchOnWindowFocus: false, retry: 1 } } }),
  );
  const hydrated = useSyncExternalStore(noChanges, () => true, () => false);
  const pathname = usePathname();
  const inert = !hydrated && !worksWithoutScripts.has(pathname);
  return (
    <QueryClientProvider client={client}>
      <CallerProvider caller={caller}>
        <fieldset disabled={inert} className="contents" data-hydrated={hydrated ? "" : undefined}>
          {children}
        </fieldset>
      </CallerProvider>
    </QueryClientProvider>
  );
}
