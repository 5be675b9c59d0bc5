import type { Metadata } from "next";
import Link from "next/link";
import { CompareView } from "@/components/trust/compare-view";
import { getDataset } from "@/lib/datasets";
import { listMetrics } from "@/lib/metrics";
import { idParam } from "@/lib/schemas/common";
import { loadForPage } from "@/lib/page-params";

export const dynamic = "force-dynamic";

const load = (rawId: string) => loadForPage(rawId, getDataset);

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Compare · ${load((await params).id).name}` };
}

export default async function ComparePage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const dataset = load((await params).id);
  const search = await searchParams;
  const a = idParam.safeParse(search.a);
  const b = idParam.safeParse(search.b);
  return (
    <div className="space-y-5">
      <div>
        <Link href={`/datasets/${dataset.id}`} className="text-sm text-slate-500 hover:text-slate-800">
          ← {dataset.name}
        </Link>
        <h1 className="mt-1 text-2xl font-semibold tracking-tight">Compare two runs</h1>
        <p className="mt-1 text-sm text-slate-500">Two executions side by side: what changed between them, flips, score deltas, tokens and cost.</p>
      </div>
      <CompareView datasetId={dataset.id} metrics={listMetrics(dataset.id)} initialA={a.success ? a.data : null} initialB={b.success ? b.data : null} />
    </div>
  );
}
