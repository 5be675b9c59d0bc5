import { DatasetsPanel } from "@/components/datasets/datasets-panel";
import { listDatasets } from "@/lib/datasets";

export const dynamic = "force-dynamic";

export default async function HomePage() {
  const first = await listDatasets({ limit: 50, offset: 0 });
  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">Datasets</h1>
        <p className="mt-1 text-sm text-slate-500">
          Each dataset holds imported conversations, the metrics that judge them, and every evaluation run.
        </p>
      </div>
      <DatasetsPanel initial={first} />
    </div>
  );
}
