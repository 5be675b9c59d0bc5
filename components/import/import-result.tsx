import Link from "next/link";
import type { ReactNode } from "react";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader } from "@/components/ui/card";
import { Table, Td, Th } from "@/components/ui/table";
import type { ImportFailure, ImportIssue, ImportSuccess, LlmFeedback } from "@/lib/schemas/imports";

const formatLabels: Record<ImportSuccess["format"], string> = {
  turnscope: "Turnscope JSON",
  openai_chat: "OpenAI chat messages",
  jsonl: "JSON Lines",
  sharegpt: "ShareGPT / LLaMA-Factory",
  anthropic_messages: "Anthropic Messages",
  content_parts: "Messages with content parts",
  records: "Records holding conversations",
  csv: "CSV, one row per message",
  coding_agent_session: "Coding-agent session log",
  message_tree: "Message trees (one conversation per path)",
  swe_agent_trajectory: "SWE-agent trajectory",
  agent_events: "Agent event stream",
  eval_log: "Evaluation log samples",
  codex_rollout: "Codex CLI session rollout",
  tau2_results: "tau2-bench simulations",
  smolagents_run: "smolagents run output",
  smolagents_memory: "smolagents memory steps",
  langsmith_runs: "LangSmith runs",
  aider_history: "Aider chat history (Markdown)",
  ai_sdk_ui_messages: "AI SDK UI messages",
  openai_responses: "OpenAI Responses items",
  gemini_contents: "Gemini contents",
  atif: "ATIF trajectories (Harbor)",
  joined_files: "Files joined on a key",
  mapping: "Your mapping",
};

const statusTitles: Record<number, string> = {
  400: "The file is not valid JSON",
  413: "The file is too large",
  415: "The file is not a UTF-8 JSON text file",
  422: "The file does not match the import format",
};

/** Issues as a table: every cell is plain text, so content from the file can never become markup. */
function IssueTable({ issues, label }: { issues: ImportIssue[]; label: string }) {
  return (
    <Table aria-label={label}>
      <thead>
        <tr>
          <Th className="w-1/4">Path</Th>
          <Th>Message</Th>
          <Th>Suggestion</Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {issues.map((issue, i) => (
          <tr key={i} data-testid={`${label === "Errors" ? "import-error" : "import-warning"}`}>
            <Td className="break-all font-mono text-xs text-slate-800">
              {issue.path}
              {issue.line !== undefined ? <span className="block text-slate-500">line {issue.line}{issue.column !== undefined ? `, column ${issue.column}` : ""}</span> : null}
            </Td>
            <Td className="break-words">{issue.message}</Td>
            <Td className="break-words text-slate-600">{issue.suggestion}</Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}

function Feedback({ feedback, fixAction }: { feedback: LlmFeedback; fixAction?: ReactNode }) {
  const t = feedback.suggested_transformation;
  const mapping = t ? Object.entries(t.mapping) : [];
  return (
    <Card data-testid="import-feedback">
      <CardHeader
        title="What to change"
        description={feedback.generated_by === "rules" ? "From Turnscope's rules (no judge model answered)" : `From the judge model (${feedback.generated_by})`}
      />
      <div className="space-y-4 px-5 py-4 text-sm">
        <p className="whitespace-pre-wrap text-slate-700">{feedback.analysis}</p>
        {feedback.usage ? (
          <p className="text-xs text-slate-500" data-testid="import-feedback-usage">
            Asking the judge cost {feedback.usage.judge_calls === 1 ? "1 call" : `${feedback.usage.judge_calls} calls`},{" "}
            {(feedback.usage.input_tokens + feedback.usage.output_tokens).toLocaleString("en")} tokens
            {feedback.usage.cost_usd === null ? " (no price for the model)" : `, $${feedback.usage.cost_usd.toFixed(4)}`}.
          </p>
        ) : null}
        {t ? (
          <div className="space-y-2" data-testid="suggested-transformation">
            <h3 className="font-medium text-slate-900">Suggested transformation</h3>
            <p className="flex flex-wrap items-center gap-2 font-mono text-xs">
              <code className="rounded bg-slate-100 px-1.5 py-0.5">{t.from}</code>
              <span aria-hidden>→</span>
              <span className="sr-only">becomes</span>
              <code className="rounded bg-slate-100 px-1.5 py-0.5">{t.to}</code>
            </p>
            {mapping.length ? (
              <Table aria-label="Value mapping">
                <thead>
                  <tr>
                    <Th>Value in the file</Th>
                    <Th>Becomes</Th>
                  </tr>
                </thead>
                <tbody className="divide-y divide-slate-100">
                  {mapping.map(([from, to]) => (
                    <tr key={from}>
                      <Td className="font-mono text-xs">{from}</Td>
                      <Td className="font-mono text-xs">{to}</Td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            ) : null}
            <details className="text-xs text-slate-500">
              <summary className="cursor-pointer">As JSON</summary>
              <pre className="mt-2 overflow-x-auto rounded bg-slate-50 p-3 text-slate-700">{JSON.stringify(t, null, 2)}</pre>
            </details>
            {fixAction}
          </div>
        ) : (
          fixAction
        )}
      </div>
    </Card>
  );
}

/** `1 conversation`, `3,031 messages`. */
const counted = (n: number, noun: string) => `${n.toLocaleString()} ${noun}${n === 1 ? "" : "s"}`;

/**
 * Text not stored (amber); copies of text stored from elsewhere in the file, not stored twice (their reason);
 * and values stored in another written form than the file's (`re-serialised: …`, said plainly).
 */
function NotImportedList({ items }: { items: NonNullable<ImportSuccess["not_imported"]> }) {
  const lost = items.filter((n) => !n.reason);
  const reserialised = items.filter((n) => n.reason?.startsWith("re-serialised"));
  const copies = items.filter((n) => n.reason && !n.reason.startsWith("re-serialised"));
  return (
    <div className="space-y-3 px-5 pb-4 text-sm" data-testid="not-imported">
      {lost.length ? (
        <div className="text-amber-900">
          <p className="font-medium">Text in the file that was not imported:</p>
          <ul className="list-disc pl-5">
            {lost.map((n) => (
              <li key={n.path} className="break-words">
                {n.characters.toLocaleString()} characters in <code>{n.path}</code>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {copies.length ? (
        <div className="text-slate-700" data-testid="copies">
          <p className="font-medium">Copies of text stored from elsewhere in the file, not stored twice:</p>
          <ul className="list-disc pl-5">
            {copies.map((n) => (
              <li key={`${n.path} ${n.reason}`} className="break-words">
                {n.characters.toLocaleString()} characters in <code>{n.path}</code>: {n.reason}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {reserialised.length ? (
        <div className="text-slate-700" data-testid="reserialised">
          <p className="font-medium">Stored as values, not byte for byte:</p>
          <ul className="list-disc pl-5">
            {reserialised.map((n) => (
              <li key={`${n.path} ${n.reason}`} className="break-words">
                <code>{n.path}</code>: {n.reason}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}

/** `fixedFrom`: the name of the refused file when this import was of its fixed version. */
export function ImportSucceeded({ result, fixedFrom }: { result: ImportSuccess; fixedFrom?: string }) {
  return (
    <div className="space-y-4">
      <Card data-testid="import-success">
        <CardHeader
          title="Import complete"
          description={`Detected format: ${formatLabels[result.format]}`}
          actions={
            <Link href={`/datasets/${result.dataset_id}`} className="text-sm font-medium text-brand-700 hover:underline">
              Open dataset →
            </Link>
          }
        />
        <div role="status" className="flex flex-wrap gap-2 px-5 py-4">
          <Badge tone="success">{counted(result.conversations_imported, "conversation")}</Badge>
          <Badge tone="success">{counted(result.messages_imported, "message")}</Badge>
          <Badge tone="success">{counted(result.steps_imported, "step")}</Badge>
          {result.dataset ? <Badge tone="brand">New dataset “{result.dataset.name}”</Badge> : null}
        </div>
        {result.records ? (
          <p className="px-5 pb-4 text-sm text-slate-600" data-testid="import-records">
            {result.records.explanation}
          </p>
        ) : null}
        {fixedFrom ? (
          <p className="px-5 pb-4 text-sm text-slate-600" data-testid="fix-applied">
            Imported with the suggested fix applied to {fixedFrom}.
          </p>
        ) : null}
        {result.not_imported?.length ? <NotImportedList items={result.not_imported} /> : null}
      </Card>
      {result.warnings.length ? (
        <Card>
          <CardHeader title={`${result.warnings.length} warning${result.warnings.length === 1 ? "" : "s"}`} description="Imported anyway; worth a look." />
          <IssueTable issues={result.warnings} label="Warnings" />
        </Card>
      ) : null}
    </div>
  );
}

export function ImportFailed({
  result,
  status,
  fixedFrom,
  fixAction,
}: {
  result: ImportFailure;
  status: number;
  /** The name of the refused file when this was the attempt with its suggested fix applied. */
  fixedFrom?: string;
  /** Shown under the suggested transformation: the buttons that apply it. */
  fixAction?: ReactNode;
}) {
  // Identical faults arrive grouped (one row, `count` places): the total counts every place.
  const errorTotal = result.errors.reduce((n, e) => n + (e.count ?? 1), 0);
  return (
    <div className="space-y-4">
      {fixedFrom ? (
        <p role="alert" data-testid="fix-still-fails" className="rounded-lg border border-amber-300 bg-amber-50 px-5 py-3 text-sm text-amber-900">
          The suggested fix was applied to {fixedFrom}, but the fixed file was refused too: the fix did not cover every problem. Nothing
          was imported. The remaining errors are below.
        </p>
      ) : null}
      <Card data-testid="import-failure" className="border-red-200">
        <CardHeader
          title={statusTitles[status] ?? "The import failed"}
          description={`Nothing was imported. ${errorTotal} error${errorTotal === 1 ? "" : "s"} to fix${
            result.format ? ` (detected format: ${formatLabels[result.format]})` : ""
          }.`}
        />
        <div role="alert" className="sr-only">
          Import failed with {errorTotal} errors
        </div>
        <IssueTable issues={result.errors} label="Errors" />
      </Card>
      {result.llm_feedback ? <Feedback feedback={result.llm_feedback} fixAction={fixAction} /> : null}
      {result.warnings.length ? (
        <Card>
          <CardHeader title="Warnings" />
          <IssueTable issues={result.warnings} label="Warnings" />
        </Card>
      ) : null}
    </div>
  );
}
