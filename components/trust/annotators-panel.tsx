import { Card, CardHeader } from "@/components/ui/card";
import type { AnnotatorAgreement } from "@/lib/schemas/labels";
import { fmt } from "./agreement-format";

/** Agreement between the people who labelled the metric: each person's labels, and κ for every pair with cells in common. */
export function AnnotatorsPanel({ data }: { data: AnnotatorAgreement }) {
  const people = data.annotators.filter((p) => p.labelled > 0 || p.notes_only > 0);
  return (
    <Card data-testid="annotator-agreement">
      <CardHeader
        title="Between annotators"
        description={`Each person's own current labels; a note without a verdict is not a label · 95% intervals`}
      />
      <ul className="flex flex-wrap gap-x-6 gap-y-1 px-5 py-2 text-sm" data-testid="annotators">
        {people.map((p) => (
          <li key={p.user_id} data-user={p.user_id} data-who={p.who}>
            <span className="font-medium text-slate-800">{p.user_id}</span>
            {p.who === "before_keys" ? <span className="text-slate-500"> (labels made before any key)</span> : p.who === "no_person" ? <span className="text-slate-500"> (not on the People page)</span> : null}:{" "}
            {p.labelled} labelled
            {p.notes_only ? <span className="text-slate-500"> (+{p.notes_only} note{p.notes_only === 1 ? "" : "s"} without a verdict)</span> : null}
          </li>
        ))}
      </ul>
      {people.some((p) => p.who !== "person") ? (
        <p className="border-t border-slate-100 px-5 py-2 text-xs text-slate-500" data-testid="annotators-explained">
          {people.some((p) => p.who === "before_keys")
            ? "“default” holds the labels made while the server was open, before anyone had a key (one-person mode): no person of the team, yet κ counts them as one more annotator. "
            : ""}
          {people.some((p) => p.who === "no_person")
            ? `${people.filter((p) => p.who === "no_person").map((p) => p.user_id).join(", ")}: no person on the People page (API_TOKEN's “admin”, or a name the open server was told in x-user-id), counted in κ as an annotator of its own. `
            : ""}
          The People page lists them under “Labels by names with no person”.
        </p>
      ) : null}
      {data.pairs.length ? (
        <table className="w-full text-sm" data-testid="annotator-pairs">
          <thead>
            <tr className="border-t border-slate-100 text-left text-xs text-slate-500">
              <th className="px-5 py-2 font-medium">People</th>
              <th className="px-5 py-2 font-medium">Cells both labelled</th>
              <th className="px-5 py-2 font-medium">Agree</th>
              <th className="px-5 py-2 font-medium">{data.kind === "score" && data.pairs.every((p) => p.kappa === null) ? "Weighted κ (quadratic)" : "Cohen's κ"}</th>
            </tr>
          </thead>
          <tbody>
            {data.pairs.map((p) => {
              const k = p.kappa ?? p.weighted_kappa;
              return (
                <tr key={`${p.a}|${p.b}`} className="border-t border-slate-100" data-pair={`${p.a}|${p.b}`}>
                  <td className="px-5 py-2">
                    {p.a} · {p.b}
                  </td>
                  <td className="px-5 py-2 font-mono">{p.n}</td>
                  <td className="px-5 py-2 font-mono">{fmt(p.accuracy)}</td>
                  <td className="px-5 py-2 font-mono" data-testid="annotator-kappa">
                    {fmt(k)}
                    {p.kappa !== null && p.intervals.kappa ? <span className="ml-2 text-xs text-slate-500">[{fmt(p.intervals.kappa[0])}, {fmt(p.intervals.kappa[1])}]</span> : null}
                    {k === null ? <span className="ml-2 text-xs text-slate-500">undefined: both gave one and the same verdict throughout</span> : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : (
        <p className="border-t border-slate-100 px-5 py-3 text-sm text-slate-500">
          {people.length < 2 ? "Only one person has labelled this metric: agreement between people needs two on the same cells." : "No two people have labelled the same cell yet."}
        </p>
      )}
    </Card>
  );
}
