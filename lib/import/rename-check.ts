/**
 * A refusal never suggests a rename it has not checked to work. Every issue whose suggestion starts
 * `Rename 'a' to 'b'` has that rename applied to the file, at every place of the same shape (as the
 * import page applies a fix: `conversations[].messages[].speaker` → `…role`), and the file checked again.
 * The suggestion stays only when nothing is then wrong at the place the issue names (the renamed field
 * and all under it); otherwise it says what the rename would leave, and a rename that cannot be tried on
 * the file (a mapping or joined files, or a path only the file's own format has) is not offered as one.
 */
import type { ImportIssue, SuggestedTransformation } from "@/lib/schemas/imports";

const renamePattern = /^Rename '([^']+)' to '([^']+)'/;
/** Distinct renames checked per refusal; each is a second check of the whole file. */
const MAX_CHECKED = 5;

type Recheck = (t: SuggestedTransformation) => { ok: boolean; errors?: ImportIssue[] } | undefined;

/** `conversations[3].messages[0..4]` → `conversations[].messages[]`. */
const generalise = (path: string) => path.replace(/\[[\d.,]+\]/g, "[]");
const under = (path: string, place: string) => path === place || path.startsWith(`${place}.`) || path.startsWith(`${place}[`);

/** Before grouping (each issue has its own path). `recheck` undefined: renames cannot be tried on this upload. */
export function checkRenames(issues: ImportIssue[], recheck: Recheck | undefined): ImportIssue[] {
  const verdicts = new Map<string, ReturnType<Recheck> | "unchecked">();
  return issues.map((issue) => {
    const match = issue.suggestion?.match(renamePattern);
    if (!match) return issue;
    const [said, from, to] = match;
    const rest = (issue.suggestion ?? "").slice(said.length);
    // The issue names the missing field (`….role`), the field to rename (`….text`) or the object that lacks it (a step).
    const named = [to, from].find((f) => issue.path === f || issue.path.endsWith(`.${f}`));
    const parent = named === undefined ? issue.path : issue.path === named ? "" : issue.path.slice(0, -named.length - 1);
    const at = (field: string) => (parent && parent !== "(root)" ? `${parent}.${field}` : field);
    const transformation = { from: generalise(at(from)), to: generalise(at(to)), mapping: {} };
    const key = `${transformation.from}\u0000${transformation.to}`;
    if (!verdicts.has(key)) verdicts.set(key, recheck && verdicts.size < MAX_CHECKED ? recheck(transformation) : "unchecked");
    const verdict = verdicts.get(key);
    if (verdict === "unchecked" || verdict === undefined) {
      return { ...issue, suggestion: `'${from}' may hold what '${to}' should (a rename that could not be tried on this file): send a mapping that names '${from}'` };
    }
    const place = at(to);
    const errors = verdict.ok ? [] : (verdict.errors ?? []);
    if (!errors.some((e) => under(e.path, place))) return issue;
    // Said with the first place of this shape that stays wrong, so the same rename reads the same everywhere (and groups).
    const left = errors.find((e) => under(generalise(e.path), transformation.to)) as ImportIssue;
    const tail = rest.startsWith(", or ") ? rest : "";
    return {
      ...issue,
      suggestion: `Renaming '${from}' to '${to}' would not import it (checked), it would give: ${left.message}${tail}`,
    };
  });
}
