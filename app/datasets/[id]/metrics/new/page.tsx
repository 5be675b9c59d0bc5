import type { Metadata } from "next";
import Link from "next/link";
import { MetricEditor } from "@/components/metrics/metric-editor";
import { listMetrics } from "@/lib/metrics/metrics";
import { listTemplates } from "@/lib/metrics/templates";
import { idParam } from "@/lib/schemas/common";
import { getDataset } from "@/lib/datasets";
import { loadForPage } from "@/lib/api/page-params";
import { pageCaller } from "@/lib/api/page-caller";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "New metric" };

export default async function NewMetricPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const dataset = await loadForPage((await params).id, getDataset);
  const wanted = idParam.safeParse((await searchParams).template);
  const templates = await listTemplates({ userId: (await pageCaller()).userId });
  return (
    <div className="space-y-6">
      <div>
        <Link href={`/datasets/${dataset.id}`} className="text-sm text-slate-500 hover:text-slate-800">
          ← {dataset.name}
        </Link>
        <h1 className="mt-1 text-2xl font-semibold tracking-tight">Add a metric</h1>
      </div>
      <MetricEditor datasetId={dataset.id} templates={templates} metrics={await listMetrics(dataset.id)} initialTemplateId={wanted.success ? wanted.data : undefined} />
    </div>
  );
}
