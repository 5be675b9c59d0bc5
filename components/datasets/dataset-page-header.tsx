import Link from "next/link";

/** The heading of a page under a dataset: a link back to the dataset, the page's title and what it is for. */
export function DatasetPageHeader({ dataset, title, children }: { dataset: { id: number; name: string }; title: string; children: React.ReactNode }) {
  return (
    <div>
      <Link href={`/datasets/${dataset.id}`} className="text-sm text-slate-500 hover:text-slate-800">
        ← {dataset.name}
      </Link>
      <h1 className="mt-1 text-2xl font-semibold tracking-tight">{title}</h1>
      <p className="mt-1 text-sm text-slate-500">{children}</p>
    </div>
  );
}
