import type { Metadata } from "next";
import { TemplateLibrary } from "@/components/metrics/template-library";
import { listTemplates } from "@/lib/metrics/templates";
import { pageCaller } from "@/lib/api/page-caller";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Templates" };

export default async function TemplatesPage() {
  // The templates the signed-in user sees through the API (`default` in the one-person mode).
  const templates = await listTemplates({ userId: (await pageCaller()).userId });
  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">Metric templates</h1>
        <p className="mt-1 text-sm text-slate-500">
          Ready-made judge prompts for conversations, messages and agent steps. Add one to a dataset from its page, or duplicate it to make it your own.
        </p>
      </div>
      <TemplateLibrary initial={templates} />
    </div>
  );
}
