/**
 * NUL (U+0000) in API input. PostgreSQL cannot store it in text or jsonb (an insert failed with a 500)
 * while SQLite kept it, so both stores refuse it the same way: a 400 naming the field. Imported
 * conversation text is different: there NUL is replaced with U+FFFD and counted (lib/import/nul.ts).
 */
import { AppError } from "@/lib/errors";

/** The path (`items[0].name`, a key's path for a key) of the first string holding NUL, or null. */
export function nulPath(value: unknown, prefix = ""): string | null {
  const stack: Array<[unknown, string]> = [[value, prefix]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === "string") {
      if (v.includes("\u0000")) return path || "(root)";
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v !== null && typeof v === "object") {
      const entries = Object.entries(v as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i];
        const childPath = path ? `${path}.${k}` : k;
        if (k.includes("\u0000")) return childPath;
        stack.push([child, childPath]);
      }
    }
  }
  return null;
}

/** Throw a 400 naming the field when any string (or key) in the input holds NUL. */
export function refuseNul(value: unknown, where: string, prefix = ""): void {
  const path = nulPath(value, prefix);
  if (path === null) return;
  const shown = path.replaceAll("\u0000", "\\u0000");
  const message = "must not contain the NUL character \\u0000";
  throw new AppError("bad_request", `Invalid ${where} (${shown}: ${message})`, [{ path: shown, message }]);
}
