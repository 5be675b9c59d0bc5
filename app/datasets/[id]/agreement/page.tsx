import type { Metadata } from "next";
import { DatasetPageHeader } from "@/components/datasets/dataset-page-header";
import { AgreementView } from "@/components/trust/agreement-view";
import { getDataset } from "@/lib/datasets";
import { listMetrics } from "@/lib/metrics";
import { idParam } from "@/lib/schemas/common";
import { loadForPage } from "@/lib/api/page-params";

export const dynamic = "force-dynamic";

const load = async (rawId: string) => await loadForPage(rawId, getDataset);

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Agreement · ${(await load((await params).id)).name}` };
}

export default async function AgreementPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const dataset = await load((await params).id);
  const search = await searchParams;
  const metric = idParam.safeParse(search.metric);
  // The comparison chosen last, kept in the address (components/trust/agreement-view.tsx writes it there).
  const text = (v: string | string[] | undefined) => (typeof v === "string" && v.length <= 200 ? v : undefined);
  const number = (v: string | string[] | undefined) => (typeof v === "string" && /^-?\d+(\.\d+)?$/.test(v) ? v : undefined);
  const compare = search.compare === "pass_fail" ? "passfail" : search.compare === "scores" ? "scores" : undefined;
  const initial = { a: text(search.a), b: text(search.b), compare, threshold: number(search.threshold), tolerance: number(search.tolerance) } as const;
  return (
    <div className="space-y-5">
      <DatasetPageHeader dataset={dataset} title="Judge agreement">
        How often two sources of verdicts agree on a metric, with 95% intervals; source B is taken as the truth.
      </DatasetPageHeader>
      <AgreementView datasetId={dataset.id} metrics={await listMetrics(dataset.id)} initialMetricId={metric.success ? metric.data : null} initial={initial} />
    </div>
  );
}
