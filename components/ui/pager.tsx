import { Button } from "./button";

/** "1–50 of 120" with Previous/Next, for offset-paged lists; hidden when everything fits one page. */
export function Pager({ offset, pageSize, total, onOffset }: { offset: number; pageSize: number; total: number; onOffset: (offset: number) => void }) {
  if (total <= pageSize) return null;
  return (
    <div className="flex items-center justify-between border-t border-slate-200 px-5 py-3 text-sm text-slate-600">
      <span>
        {offset + 1}–{Math.min(offset + pageSize, total)} of {total}
      </span>
      <div className="flex gap-2">
        <Button variant="secondary" size="sm" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - pageSize))}>
          Previous
        </Button>
        <Button variant="secondary" size="sm" disabled={offset + pageSize >= total} onClick={() => onOffset(offset + pageSize)}>
          Next
        </Button>
      </div>
    </div>
  );
}
