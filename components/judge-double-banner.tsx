/** Said on every page while the judge is the test double (lib/judge/test-double-notice.ts): its verdicts are scripted. */
export function JudgeDoubleBanner() {
  return (
    <div role="note" aria-label="Judge test double" data-testid="judge-double-banner" className="border-b border-amber-300 bg-amber-50">
      <p className="mx-auto max-w-7xl px-6 py-2 text-sm text-amber-900">
        <strong>The judge is a test double, not a model.</strong> Its verdicts are scripted — the same canned verdict, or (in the demo)
        a score from plain features of the text such as &ldquo;booked&rdquo; or &ldquo;sorry&rdquo; — so distributions, comparisons
        and agreement show how Turnscope works, not how good an agent is. Point <code>OPENAI_BASE_URL</code> at a real model to judge.
      </p>
    </div>
  );
}
