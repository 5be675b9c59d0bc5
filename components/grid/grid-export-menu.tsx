"use client";

import { exportFormats } from "@/components/results/export-formats";
import { Menu, menuItemClass } from "@/components/ui/popover";


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
        exportFormats.map((f) => (
          <a
            key={f.query}
            role="menuitem"
            href={`/api/datasets/${datasetId}/export?${f.query}`}
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
