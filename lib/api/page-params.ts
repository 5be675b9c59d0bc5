import "server-only";
import { notFound } from "next/navigation";
import { AppError } from "@/lib/errors";
import { idParam } from "@/lib/schemas/common";

/** A page's lookup by path id: a malformed id, or a 404 from the lookup, renders the not-found page. */
export async function loadForPage<T>(rawId: string, lookup: (id: number) => T | Promise<T>): Promise<T> {
  const parsed = idParam.safeParse(rawId);
  if (!parsed.success) notFound();
  try {
    return await lookup(parsed.data);
  } catch (e) {
    if (e instanceof AppError && e.status === 404) notFound();
    throw e;
  }
}
