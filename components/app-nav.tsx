import Link from "next/link";
import { SignOutButton } from "@/components/auth/sign-out-button";

const links = [
  { href: "/", label: "Datasets" },
  { href: "/templates", label: "Templates" },
  { href: "/import", label: "Import" },
  { href: "/people", label: "People" },
  { href: "/settings", label: "Settings" },
  { href: "/docs", label: "API docs" },
];

export function AppNav() {
  return (
    <header className="border-b border-slate-200 bg-white">
      <nav aria-label="Main" className="mx-auto flex h-14 max-w-7xl items-center gap-8 px-6">
        <Link href="/" className="flex items-center gap-2 text-base font-semibold tracking-tight text-slate-900">
          <span aria-hidden className="inline-block h-5 w-5 rounded bg-gradient-to-br from-brand-500 to-violet-500" />
          Turnscope
        </Link>
        <ul className="flex items-center gap-1 text-sm">
          {links.map((l) => (
            <li key={l.href}>
              <Link href={l.href} className="rounded-md px-3 py-1.5 text-slate-600 hover:bg-slate-100 hover:text-slate-900">
                {l.label}
              </Link>
            </li>
          ))}
        </ul>
        <SignOutButton />
      </nav>
    </header>
  );
}
