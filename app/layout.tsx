import type { Metadata } from "next";
import type { ReactNode } from "react";
import { AppNav } from "@/components/app-nav";
import { JudgeDoubleBanner } from "@/components/judge-double-banner";
import { Providers } from "@/components/providers";
import { currentPageCaller } from "@/lib/api/page-caller";
import { judgeIsTestDouble } from "@/lib/judge/test-double-notice";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Turnscope", template: "%s · Turnscope" },
  description: "Evaluate conversations with AI assistants and agents.",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Who is looking, so that controls the caller's role may not use are disabled with the reason (issue 34.4).
  const [caller, judgeIsDouble] = await Promise.all([currentPageCaller(), judgeIsTestDouble()]);
  return (
    <html lang="en">
      <body className="min-h-screen">
        <Providers caller={caller ? { user: caller.userId, role: caller.role, via: caller.via } : null}>
          <AppNav />
          {judgeIsDouble && <JudgeDoubleBanner />}
          <main className="mx-auto max-w-7xl px-6 py-8">{children}</main>
        </Providers>
      </body>
    </html>
  );
}
