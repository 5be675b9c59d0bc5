import type { SelectHTMLAttributes } from "react";
import { cn } from "./cn";

/** A native select styled like Input: keyboard and screen-reader behaviour come for free. */
export function Select({ className, ...props }: SelectHTMLAttributes<HTMLSelectElement>) {
  return (
    <select
      className={cn(
        "block h-10 w-full rounded-md border border-slate-300 bg-white px-3 text-sm shadow-sm focus:border-brand-500 focus:outline-none focus:ring-2 focus:ring-brand-100 aria-[invalid=true]:border-red-500",
        className,
      )}
      {...props}
    />
  );
}
