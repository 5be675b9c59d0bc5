/** The grid's view (meta columns, filter, sort) and its place in the address: pure, so server pages read it too. */
import { replaceQuery } from "@/lib/client/address";

/** Optional meta columns, filter and sort of the conversation rows (the grid endpoint's `meta`, `filter`, `sort`). */
export type GridView = { meta: string; filter: string; sort: string };

export const emptyView: GridView = { meta: "", filter: "", sort: "" };

/** The view as the page's address gives it (`?meta=…&filter=…&sort=…`), so a reload or a shared link shows the same rows. */
export function viewFromSearch(search: Record<string, string | string[] | undefined>): GridView {
  const text = (key: string) => (typeof search[key] === "string" ? (search[key] as string).trim() : "");
  return { meta: text("meta"), filter: text("filter"), sort: text("sort") };
}

/** Writes the view into the address without a navigation (empty parts left out). */
export function keepViewInUrl(view: GridView) {
  replaceQuery({ meta: view.meta, filter: view.filter, sort: view.sort });
}
