import type { Metadata } from "next";
import { ConnectionTest } from "@/components/settings/connection-test";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader } from "@/components/ui/card";
import { judgeSettings } from "@/lib/judge";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Settings" };

function Row({ label, children, hint }: { label: string; children: React.ReactNode; hint?: string }) {
  return (
    <div className="grid grid-cols-[14rem_1fr] gap-4 px-5 py-3">
      <dt className="text-sm font-medium text-slate-600">
        {label}
        {hint ? <span className="block text-xs font-normal text-slate-400">{hint}</span> : null}
      </dt>
      <dd className="break-all text-sm text-slate-900">{children}</dd>
    </div>
  );
}

/** The judge configuration in effect (from the environment; the key itself is never shown). */
export default function SettingsPage() {
  const s = judgeSettings();
  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">Settings</h1>
        <p className="mt-1 text-sm text-slate-500">The judge model configuration in effect. It is set with environment variables when the server starts.</p>
      </div>
      <div className="grid gap-6 lg:grid-cols-[1fr_24rem]">
        <Card>
          <CardHeader
            title="Judge model"
            description="Every LLM metric is judged through this OpenAI-compatible endpoint."
            actions={s.configured ? <Badge tone="success">configured</Badge> : <Badge tone="danger">not configured</Badge>}
          />
          <dl className="divide-y divide-slate-100" aria-label="Judge configuration">
            <Row label="Provider URL" hint="OPENAI_BASE_URL">
              <span className="font-mono" data-testid="judge-base-url">
                {s.base_url ?? "the provider's default (OpenAI)"}
              </span>
            </Row>
            <Row label="API key" hint="OPENAI_API_KEY">
              {s.api_key_set ? "set (never shown)" : "not set"}
            </Row>
            <Row label="Default model" hint="JUDGE_MODEL">
              <span className="font-mono" data-testid="judge-default-model">
                {s.default_model}
              </span>
            </Row>
            <Row label="Timeout per call" hint="JUDGE_TIMEOUT_MS">
              {(s.timeout_ms / 1000).toLocaleString()} s
            </Row>
            <Row label="Retries" hint="JUDGE_MAX_RETRIES">
              {s.max_retries} on 429, 5xx and network errors
            </Row>
            <Row label="Concurrent calls per model" hint="JUDGE_MAX_CONCURRENCY">
              {s.max_concurrency}
            </Row>
            <Row label="Priced models" hint="JUDGE_PRICES">
              {s.priced_models.length ? s.priced_models.join(", ") : "none (costs are not reported)"}
            </Row>
            <Row label="Context window" hint="JUDGE_CONTEXT_TOKENS, JUDGE_CONTEXT_TOKENS_BY_MODEL">
              {s.context_tokens.toLocaleString("en")} tokens
              {Object.entries(s.context_tokens_by_model).map(([model, tokens]) => `; ${model}: ${tokens.toLocaleString("en")}`).join("")}
            </Row>
            <Row label="Import feedback calls" hint={`this server process, since ${s.side_calls.since.slice(0, 16).replace("T", " ")} UTC`}>
              <SideCalls usage={s.side_calls.import_feedback} testId="judge-import-feedback-usage" />
            </Row>
            <Row label="Import mapping calls" hint="the model writing a mapping for a file nothing else read">
              <SideCalls usage={s.side_calls.import_mapping} testId="judge-import-mapping-usage" />
            </Row>
          </dl>
          {!s.configured ? (
            <p className="border-t border-slate-200 px-5 py-3 text-sm text-amber-800">
              No judge is configured: set OPENAI_API_KEY or OPENAI_BASE_URL and restart. LLM metrics fail their cells until then.
            </p>
          ) : null}
        </Card>
        <Card className="h-fit">
          <CardHeader title="Test connection" description="Sends one small judge request and reports what came back." />
          <div className="px-5 py-4">
            <ConnectionTest defaultModel={s.default_model} />
          </div>
        </Card>
      </div>
    </div>
  );
}

/** Judge calls made outside any run: how many, their tokens, their cost. */
function SideCalls({ usage, testId }: { usage: { judge_calls: number; input_tokens: number; output_tokens: number; cost_usd: number | null }; testId: string }) {
  return (
    <span data-testid={testId}>
      {usage.judge_calls.toLocaleString("en")} calls, {(usage.input_tokens + usage.output_tokens).toLocaleString("en")} tokens,{" "}
      {usage.cost_usd === null ? "cost unknown (a model without a price)" : `$${usage.cost_usd.toFixed(4)}`}
    </span>
  );
}
