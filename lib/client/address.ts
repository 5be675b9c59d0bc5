/** The page's address as the place a page's choices live (filters, runs compared), written without a navigation. */

/** Set (or, for null and "", remove) these query parameters of the current address, keeping the rest. */
export function replaceQuery(values: Record<string, string | null>): void {
  const url = new URL(window.location.href);
  for (const [key, value] of Object.entries(values)) {
    if (value) url.searchParams.set(key, value);
    else url.searchParams.delete(key);
  }
  window.history.replaceState(window.history.state, "", url);
}
