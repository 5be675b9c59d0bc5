/**
 * Who wrote labels, as the team knows them (issue 51): a person on the People page, "default" — the
 * one-person mode's user, whose labels were made while the server was open, before any key or API_TOKEN —
 * or a name with no person (API_TOKEN's "admin", or a name an open server was told in x-user-id). The
 * People page lists the authors who are not people; annotator agreement says which is which, since κ
 * counts each name as one more person.
 */
import "server-only";
import { listUserRows } from "@/db/repositories/auth";
import { labelAuthorRows } from "@/db/repositories/labels";

/** The user id of labels made while the server was open (lib/auth/identify.ts). */
export const OPEN_MODE_USER = "default";

export type LabelAuthorKind = "person" | "before_keys" | "no_person";

/** What each name is: a person of the team, the open server's "default", or a name with no person. */
export async function labelAuthorKinds(userIds: readonly string[]): Promise<Map<string, LabelAuthorKind>> {
  const people = new Set((await listUserRows()).map((u) => u.name));
  return new Map(userIds.map((id) => [id, people.has(id) ? "person" : id === OPEN_MODE_USER ? "before_keys" : "no_person"]));
}

export type LabelAuthor = { user_id: string; labels: number; datasets: number; who: LabelAuthorKind };

/** Everyone with a current label, by name, with what they are. */
export async function listLabelAuthors(): Promise<LabelAuthor[]> {
  const rows = await labelAuthorRows();
  const kinds = await labelAuthorKinds(rows.map((r) => r.userId));
  return rows.map((r) => ({ user_id: r.userId, labels: r.labels, datasets: r.datasets, who: kinds.get(r.userId)! }));
}
