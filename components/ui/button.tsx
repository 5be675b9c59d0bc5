"use client";

import type { ButtonHTMLAttributes } from "react";
import { useAccess } from "@/components/caller-context";
import type { Role } from "@/lib/auth/roles";
import { cn } from "./cn";

type Variant = "primary" | "secondary" | "ghost" | "danger";
type Size = "sm" | "md";

const variants: Record<Variant, string> = {
  primary: "bg-brand-600 text-white hover:bg-brand-700 shadow-sm disabled:bg-brand-600/50",
  secondary: "bg-white text-slate-800 border border-slate-300 hover:bg-slate-50 shadow-sm disabled:text-slate-400",
  ghost: "text-slate-700 hover:bg-slate-100 disabled:text-slate-400",
  danger: "bg-red-600 text-white hover:bg-red-700 shadow-sm disabled:bg-red-600/50",
};
const sizes: Record<Size, string> = { sm: "h-8 px-3 text-sm", md: "h-10 px-4 text-sm" };

/**
 * `needs`: the role the button's action needs (annotator to write, admin to manage). A caller without it sees the
 * button disabled, its title saying why, instead of learning the rule from a 403.
 */
export function Button({
  variant = "primary",
  size = "md",
  className,
  type = "button",
  needs,
  ...props
}: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: Variant; size?: Size; needs?: Role }) {
  const access = useAccess(needs ?? "viewer");
  const refused = needs !== undefined && !access.allowed;
  return (
    <button
      type={type}
      className={cn(
        "inline-flex items-center justify-center gap-2 rounded-md font-medium transition-colors disabled:cursor-not-allowed",
        variants[variant],
        sizes[size],
        className,
      )}
      {...props}
      {...(refused ? { disabled: true, title: access.why, "data-needs-role": needs } : {})}
    />
  );
}
