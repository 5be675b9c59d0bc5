import type { Metadata } from "next";
import { TemplateLibrary } from "@/components/metrics/template-library";
import { listTemplates } from "@/lib/metrics/templates";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Templates" };

export default async function TemplatesPage() {
  // The UI sends no X-User-Id, so it acts as the `default` user; the server list matches the client's.
  const templates = await listTemplates({ userId: "default" });
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
