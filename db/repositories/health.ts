import "server-only";
import { rawRows } from "../store";

/** True when the database opens and answers a query. */
export async function pingDatabase(): Promise<boolean> {
  try {
    return (await rawRows<{ ok: number }>("select 1 as ok"))[0]?.ok === 1;
  } catch {
    return false;
  }
}
