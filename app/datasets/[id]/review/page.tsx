import type { Metadata } from "next";
import Link from "next/link";
import { ReviewQueue } from "@/components/trust/review-queue";
import { getDataset } from "@/lib/datasets";
import { listMetrics } from "@/lib/metrics";
import { idParam } from "@/lib/schemas/common";
import { loadForPage } from "@/lib/page-params";

export const dynamic = "force-dynamic";

const load = (rawId: string) => loadForPage(rawId, getDataset);

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Review · ${load((await params).id).name}` };
}

export default async function ReviewPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const dataset = load((await params).id);
  const metric = idParam.safeParse((await searchParams).metric);
  return (
    <div className="space-y-5">
      <div>
        <Link href={`/datasets/${dataset.id}`} className="text-sm text-slate-500 hover:text-slate-800">
          ← {dataset.name}
        </Link>
        <h1 className="mt-1 text-2xl font-semibold tracking-tight">Review queue</h1>
        <p className="mt-1 text-sm text-slate-500">Label the judge&apos;s verdicts one cell after another. Press ? for the keys.</p>
      </div>
      <ReviewQueue datasetId={dataset.id} metrics={listMetrics(dataset.id)} initialMetricId={metric.success ? metric.data : null} />
    </div>
  );
}
