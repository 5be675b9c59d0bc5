import type { Metadata } from "next";
import { ApiReference } from "@/components/api-reference";
import { buildOpenApiDocument } from "@/lib/api/openapi/build";
import { version } from "@/lib/version";

export const metadata: Metadata = { title: "API docs" };

export default function DocsPage() {
  const doc = buildOpenApiDocument({ version });
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-4">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">API reference</h1>
          <p className="mt-1 text-sm text-slate-500">
            Every endpoint under <code className="font-mono">/api</code>, generated from the schemas the server validates with.
          </p>
        </div>
        <a href="/api/openapi.json" className="text-sm font-medium text-brand-700 hover:underline">
          openapi.json
        </a>
      </div>
      <div className="rounded-lg border border-slate-200 bg-white p-2 shadow-sm">
        <ApiReference spec={doc} />
      </div>
    </div>
  );
}
