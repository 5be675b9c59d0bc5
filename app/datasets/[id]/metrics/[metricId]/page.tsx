import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { AgreementHistory } from "@/components/metrics/agreement-history";
import { MetricEditor } from "@/components/metrics/metric-editor";
import { ReferenceFields } from "@/components/metrics/reference-fields";
import { getMetric, listMetrics } from "@/lib/metrics/metrics";
import { listTemplates } from "@/lib/metrics/templates";
import { getDataset } from "@/lib/datasets";
import { loadForPage } from "@/lib/api/page-params";
import { pageCaller } from "@/lib/api/page-caller";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Edit metric" };

export default async function EditMetricPage({ params }: { params: Promise<{ id: string; metricId: string }> }) {
  const { id, metricId } = await params;
  const dataset = await loadForPage(id, getDataset);
  const metric = await loadForPage(metricId, getMetric);
  if (metric.dataset_id !== dataset.id) notFound();
  const templates = await listTemplates({ userId: (await pageCaller()).userId });
  return (
    <div className="space-y-6">
      <div>
        <Link href={`/datasets/${dataset.id}`} className="text-sm text-slate-500 hover:text-slate-800">
          ← {dataset.name}
        </Link>
        <h1 className="mt-1 text-2xl font-semibold tracking-tight">{metric.name}</h1>
      </div>
      <MetricEditor datasetId={dataset.id} templates={templates} metric={metric} metrics={await listMetrics(dataset.id)} />
      <div className="lg:max-w-[calc(100%-31.5rem)]">
        <ReferenceFields metric={metric} />
      </div>
      <div className="lg:max-w-[calc(100%-31.5rem)]">
        <AgreementHistory metric={metric} />
      </div>
    </div>
  );
}
