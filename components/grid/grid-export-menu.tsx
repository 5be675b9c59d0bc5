"use client";

import { Menu, menuItemClass } from "@/components/ui/popover";

const formats = [
  { format: "csv", label: "CSV" },
  { format: "json", label: "JSON" },
  { format: "xlsx", label: "Excel (.xlsx)" },
] as const;

/** Download links for the grid's state: the latest verdict of every cell, with conversation meta. */
export function GridExportMenu({ datasetId }: { datasetId: number }) {
  return (
    <Menu
      label="Export the grid"
      align="end"
      trigger={<>Export ▾</>}
      triggerClassName="inline-flex h-9 items-center whitespace-nowrap rounded-md px-3 text-sm font-medium text-slate-700 hover:bg-slate-100"
    >
      {(close) =>
        formats.map((f) => (
          <a
            key={f.format}
            role="menuitem"
            href={`/api/datasets/${datasetId}/export?format=${f.format}`}
            download
            className={menuItemClass}
            // A download leaves the page where it is, so the menu must close by itself.
            onClick={close}
          >
            {f.label}
          </a>
        ))
      }
    </Menu>
  );
}
