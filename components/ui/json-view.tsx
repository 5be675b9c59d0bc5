import { cn } from "./cn";

/**
 * A JSON value as a collapsible tree of plain text. Strings are shown exactly as they are — never
 * parsed as HTML — because tool results and judge answers are untrusted content.
 */
export function JsonView({ value, className, label }: { value: unknown; className?: string; label?: string }) {
  return (
    <div className={cn("overflow-x-auto rounded-md bg-slate-50 p-2 font-mono text-xs leading-5 text-slate-800 ring-1 ring-inset ring-slate-200", className)} aria-label={label}>
      <Node value={value} depth={0} />
    </div>
  );
}

function Scalar({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span className="text-slate-400">null</span>;
  if (typeof value === "string") return <span className="whitespace-pre-wrap break-words text-emerald-800">{JSON.stringify(value)}</span>;
  if (typeof value === "number") return <span className="text-blue-700">{String(value)}</span>;
  if (typeof value === "boolean") return <span className="text-violet-700">{String(value)}</span>;
  return <span>{String(value)}</span>;
}

function Node({ value, depth }: { value: unknown; depth: number }) {
  if (value === null || typeof value !== "object") return <Scalar value={value} />;
  const isArray = Array.isArray(value);
  const entries: [string, unknown][] = isArray ? value.map((v, i) => [String(i), v]) : Object.entries(value as Record<string, unknown>);
  const [open, close] = isArray ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) return <span>{open + close}</span>;
  return (
    <details open={depth < 3} className="group inline-block align-top">
      <summary className="cursor-pointer list-none text-slate-500 hover:text-slate-800">
        {open}
        <span className="group-open:hidden">
          {" "}
          {entries.length} {isArray ? (entries.length === 1 ? "item" : "items") : entries.length === 1 ? "key" : "keys"} {close}
        </span>
      </summary>
      <div className="border-l border-slate-200 pl-4">
        {entries.map(([k, v]) => (
          <div key={k}>
            {isArray ? null : <span className="text-slate-600">{JSON.stringify(k)}: </span>}
            <Node value={v} depth={depth + 1} />
          </div>
        ))}
      </div>
      <span className="text-slate-500">{close}</span>
    </details>
  );
}
