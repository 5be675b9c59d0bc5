import type { Metadata } from "next";
import Link from "next/link";
import { AgreementView } from "@/components/trust/agreement-view";
import { getDataset } from "@/lib/datasets";
import { listMetrics } from "@/lib/metrics";
import { idParam } from "@/lib/schemas/common";
import { loadForPage } from "@/lib/page-params";

export const dynamic = "force-dynamic";

const load = (rawId: string) => loadForPage(rawId, getDataset);

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Agreement · ${load((await params).id).name}` };
}

export default async function AgreementPage({
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
        <h1 className="mt-1 text-2xl font-semibold tracking-tight">Judge agreement</h1>
        <p className="mt-1 text-sm text-slate-500">How often two sources of verdicts agree on a metric, with 95% intervals; source B is taken as the truth.</p>
      </div>
      <AgreementView datasetId={dataset.id} metrics={listMetrics(dataset.id)} initialMetricId={metric.success ? metric.data : null} />
    </div>
  );
}
