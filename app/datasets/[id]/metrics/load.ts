/** Shared loading for the metric editor pages: the dataset or a 404 page. */
import "server-only";
import { notFound } from "next/navigation";
import { AppError } from "@/lib/api/errors";
import { getDataset } from "@/lib/datasets";
import { idParam } from "@/lib/schemas/common";

export function parseIdOr404(raw: string): number {
  const parsed = idParam.safeParse(raw);
  if (!parsed.success) notFound();
  return parsed.data;
}

/** Run a lib call, turning its 404 AppError into Next's not-found page. */
export function or404<T>(load: () => T): T {
  try {
    return load();
  } catch (e) {
    if (e instanceof AppError && e.status === 404) notFound();
    throw e;
  }
}

export function loadDataset(rawId: string) {
  const id = parseIdOr404(rawId);
  return or404(() => getDataset(id));
}
