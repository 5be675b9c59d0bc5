import type { Metadata } from "next";
import { ImportPanel } from "@/components/import/import-panel";
import { getDataset, listDatasets } from "@/lib/datasets";
import { idParam } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Import conversations" };

export default async function ImportPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const raw = (await searchParams).dataset_id;
  const parsed = idParam.safeParse(typeof raw === "string" ? raw : "");
  const { items } = await listDatasets({ limit: 500, offset: 0 });
  let initialDatasetId: number | undefined;
  if (parsed.success) {
    // The dataset asked for may be older than the newest 500; add it so it can be preselected.
    if (!items.some((d) => d.id === parsed.data)) {
      try {
        items.unshift(await getDataset(parsed.data));
      } catch {
        // Unknown id: fall back to no preselection.
      }
    }
    initialDatasetId = items.some((d) => d.id === parsed.data) ? parsed.data : undefined;
  }
  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">Import conversations</h1>
        <p className="mt-1 text-sm text-slate-500">
          Upload a file of conversations into a new or existing dataset. If anything is wrong, every problem is listed with where it
          is and how to fix it.
        </p>
      </div>
      <ImportPanel datasets={items} initialDatasetId={initialDatasetId} />
    </div>
  );
}
