import type { Metadata } from "next";
import Link from "next/link";
import { StartComparison } from "@/components/comparisons/start-comparison";
import { DatasetPageHeader } from "@/components/datasets/dataset-page-header";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader } from "@/components/ui/card";
import { Table, Td, Th } from "@/components/ui/table";
import { loadForPage } from "@/lib/api/page-params";
import { listDatasetComparisons } from "@/lib/comparisons";
import { getDataset } from "@/lib/datasets";
import { listMetrics } from "@/lib/metrics";
import { idParam } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

const load = async (rawId: string) => await loadForPage(rawId, getDataset);

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Compare replies · ${(await load((await params).id)).name}` };
}

/**
 * `?metric=<id>` preselects the pairwise metric (the grid's column menu and cells link here). Below the form,
 * the comparisons this dataset took part in, newest first, each linking to its page.
 */
export default async function PairwisePage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const dataset = await load((await params).id);
  const metric = idParam.safeParse((await searchParams).metric);
  const allMetrics = await listMetrics(dataset.id);
  const metrics = allMetrics.filter((m) => m.output_type === "pairwise");
  const comparisons = await listDatasetComparisons(dataset.id);
  const otherIds = new Set(comparisons.flatMap((c) => [c.a_dataset_id, c.b_dataset_id]).filter((id): id is number => id !== null && id !== dataset.id));
  // A dataset deleted since is named by its id.
  const others = (await Promise.all([...otherIds].map((id) => getDataset(id).catch(() => null)))).filter((d) => d !== null);
  const datasetName = (id: number | null) => (id === dataset.id ? "this dataset" : (others.find((d) => d.id === id)?.name ?? `dataset ${id}`));
  const metricName = (id: number) => allMetrics.find((m) => m.id === id)?.name ?? `metric ${id}`;
  return (
    <div className="space-y-5">
      <DatasetPageHeader dataset={dataset} title="Compare replies">
        A pairwise metric judges two replies to the same input, in both orders: a verdict that flips with the order is a tie.
      </DatasetPageHeader>
      <StartComparison datasetId={dataset.id} metrics={metrics} initialMetricId={metric.success && metrics.some((m) => m.id === metric.data) ? metric.data : null} />
      <Card data-testid="dataset-comparisons">
        <CardHeader title="Comparisons" description="The latest comparisons with this dataset on either side, newest first." />
        {comparisons.length ? (
          <Table>
            <thead>
              <tr>
                <Th>Comparison</Th>
                <Th>Metric</Th>
                <Th>a</Th>
                <Th>b</Th>
                <Th>a wins · ties · b wins</Th>
                <Th>Status</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {comparisons.map((c) => (
                <tr key={c.id} data-comparison={c.id}>
                  <Td>
                    <Link href={`/comparisons/${c.id}`} className="font-medium text-brand-700 hover:underline">
                      Comparison #{c.id}
                    </Link>
                  </Td>
                  <Td>{metricName(c.pipeline_node_id)}</Td>
                  <Td>{datasetName(c.a_dataset_id)}</Td>
                  <Td>{c.b_dataset_id === null ? "sibling replies within a" : datasetName(c.b_dataset_id)}</Td>
                  <Td className="font-mono">
                    {c.wins_a} · {c.ties} · {c.wins_b} <span className="font-sans text-xs text-slate-500">of {c.total} pairs</span>
                  </Td>
                  <Td>
                    <Badge tone={c.status === "completed" ? "success" : c.status === "failed" ? "danger" : c.status === "cancelled" ? "warning" : "brand"}>{c.status}</Badge>
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        ) : (
          <p className="px-5 py-3 text-sm text-slate-500">None yet: the comparisons started here (or through POST /api/comparisons) are listed here.</p>
        )}
      </Card>
    </div>
  );
}
