"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { Field } from "@/components/ui/field";
import { Select } from "@/components/ui/select";
import type { EvaluationLevel, OutputType } from "@/lib/vocabulary";
import { apiFetch } from "@/lib/client/api";
import type { Conversation, ConversationSummary } from "@/lib/schemas/datasets";
import type { JudgePromptPreview } from "@/lib/schemas/metrics";
import { levelLabels } from "./labels";

function clip(text: string | null, n = 60): string {
  if (!text) return "(no content)";
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > n ? `${flat.slice(0, n)}…` : flat;
}

type Entity = { id: number; label: string };

/** The entities of the chosen conversation that a metric of this level judges. */
function entitiesOf(conversation: Conversation, level: EvaluationLevel): Entity[] {
  if (level === "conversation") return [{ id: conversation.id, label: "The whole conversation" }];
  if (level === "message") {
    const assistant = conversation.messages.filter((m) => m.role === "assistant");
    // Message metrics judge assistant messages; a conversation without any still gets a preview.
    const list = assistant.length ? assistant : conversation.messages;
    return list.map((m) => ({ id: m.id, label: `#${m.position + 1} ${m.role}: ${clip(m.content)}` }));
  }
  return conversation.messages.flatMap((m) =>
    m.steps.map((s, i) => {
      const what = s.tool_call ? `tool call ${clip(JSON.stringify(s.tool_call), 40)}` : s.tool_result ? "tool result" : s.thinking ? "thinking" : "output";
      return { id: s.id, label: `Message #${m.position + 1} · step ${i + 1}: ${what}` };
    }),
  );
}

/**
 * Picks a real conversation/message/step of the dataset and shows the exact text the judge would
 * receive for the current (unsaved) prompt, without calling the judge.
 */
export function PreviewPanel({
  datasetId,
  level,
  prompt,
  outputType,
  outputSchema,
  disabledReason,
  modelName = null,
}: {
  datasetId: number;
  level: EvaluationLevel;
  prompt: string;
  outputType: OutputType;
  outputSchema: Record<string, unknown> | null;
  disabledReason: string | null;
  /** The saved metric's judge model: the prompt is fitted to its context window (null → JUDGE_MODEL). */
  modelName?: string | null;
}) {
  const [conversationId, setConversationId] = useState<number | null>(null);
  const [entityId, setEntityId] = useState<number | null>(null);

  const conversations = useQuery({
    queryKey: ["conversations", datasetId],
    queryFn: async () => (await apiFetch<ConversationSummary[]>(`/datasets/${datasetId}/conversations?limit=500`)).data,
  });
  const chosenConversation = conversationId ?? conversations.data?.[0]?.id ?? null;
  const conversation = useQuery({
    queryKey: ["conversation", chosenConversation],
    queryFn: async () => (await apiFetch<Conversation>(`/conversations/${chosenConversation}`)).data,
    enabled: chosenConversation !== null,
  });
  const entities = conversation.data ? entitiesOf(conversation.data, level) : [];
  const chosenEntity = entities.some((e) => e.id === entityId) ? entityId : (entities[0]?.id ?? null);

  const request = { prompt, evaluation_level: level, output_type: outputType, output_schema: outputSchema, entity_type: level, entity_id: chosenEntity, model_name: modelName };
  const preview = useMutation({
    mutationFn: async (body: typeof request) =>
      (await apiFetch<JudgePromptPreview>("/evaluation-pipeline-nodes/preview", { method: "POST", json: body })).data,
  });
  const stale = preview.variables !== undefined && JSON.stringify(preview.variables) !== JSON.stringify(request);

  const noData = conversations.data && conversations.data.length === 0;
  const cannotRun = disabledReason ?? (noData ? "Import conversations into this dataset to preview." : chosenEntity === null ? `No ${level} to preview in this conversation.` : null);

  return (
    <Card>
      <CardHeader title="Preview" description="The exact text the judge receives for a real entity. The judge is not called." />
      <div className="space-y-4 px-5 py-4">
        <Field id="preview-conversation" label="Conversation">
          <Select
            id="preview-conversation"
            value={chosenConversation ?? ""}
            disabled={!conversations.data?.length}
            onChange={(e) => {
              setConversationId(Number(e.target.value));
              setEntityId(null);
            }}
          >
            {(conversations.data ?? []).map((c) => (
              <option key={c.id} value={c.id}>
                {c.position + 1}. {c.label}
              </option>
            ))}
          </Select>
        </Field>
        {level !== "conversation" ? (
          <Field id="preview-entity" label={levelLabels[level]}>
            <Select id="preview-entity" value={chosenEntity ?? ""} disabled={!entities.length} onChange={(e) => setEntityId(Number(e.target.value))}>
              {entities.map((e) => (
                <option key={e.id} value={e.id}>
                  {e.label}
                </option>
              ))}
            </Select>
          </Field>
        ) : null}
        {cannotRun ? <p className="text-sm text-slate-500">{cannotRun}</p> : null}
        <Button needs="annotator" variant="secondary" className="w-full" disabled={!!cannotRun || preview.isPending} onClick={() => preview.mutate(request)}>
          {preview.isPending ? "Building…" : "Preview judge prompt"}
        </Button>
        {preview.error ? (
          <p role="alert" className="text-sm text-red-600">
            {preview.error.message}
          </p>
        ) : null}
        {preview.data && !preview.isPending ? (
          <div className="space-y-3" data-testid="judge-preview">
            {stale ? (
              <p className="text-sm text-amber-700">The definition or entity changed since this preview; preview again to update it.</p>
            ) : null}
            {preview.data.missing.length ? (
              <div className="flex flex-wrap items-center gap-1.5 text-sm">
                <span className="text-slate-500">No value here (sent as “(none)”):</span>
                {preview.data.missing.map((m) => (
                  <Badge key={m} tone="warning">
                    <span className="font-mono">{m}</span>
                  </Badge>
                ))}
              </div>
            ) : null}
            {preview.data.goal ? (
              <p className={preview.data.goal.source === "first_user_message" ? "text-sm text-amber-700" : "text-sm text-slate-600"} data-testid="preview-goal">
                <span className="font-mono">@GOAL</span>: {preview.data.goal.note}
              </p>
            ) : null}
            <p className="text-sm text-slate-600" data-testid="preview-tokens">
              About {preview.data.token_estimate.toLocaleString("en")} tokens
              {preview.data.budget_tokens !== null ? ` of ${preview.data.budget_tokens.toLocaleString("en")} available` : ""} for{" "}
              <span className="font-mono">{preview.data.model}</span> ({preview.data.context_tokens.toLocaleString("en")}-token context).
            </p>
            {preview.data.truncated.length ? (
              <div role="note" className="rounded-md bg-amber-50 p-3 text-sm text-amber-900" data-testid="preview-truncated">
                <p>Cut to fit the judge&apos;s context (the middle of each item; a marker in the prompt says how much):</p>
                <ul className="mt-1 list-disc pl-5">
                  {preview.data.truncated.map((t, i) => (
                    <li key={`${t.item}-${i}`}>
                      <span className="font-mono">{t.item}</span>: {t.removed_characters.toLocaleString("en")} characters
                    </li>
                  ))}
                </ul>
              </div>
            ) : null}
            <section aria-label="System message">
              <h3 className="text-xs font-semibold uppercase tracking-wide text-slate-500">System message</h3>
              <pre className="mt-1 max-h-56 overflow-auto whitespace-pre-wrap rounded-md bg-slate-50 p-3 font-mono text-xs text-slate-700">
                {preview.data.system}
              </pre>
            </section>
            <section aria-label="Judge prompt">
              <h3 className="text-xs font-semibold uppercase tracking-wide text-slate-500">Prompt</h3>
              <pre className="mt-1 max-h-[32rem] overflow-auto whitespace-pre-wrap rounded-md bg-slate-50 p-3 font-mono text-xs text-slate-800">
                {preview.data.prompt}
              </pre>
            </section>
          </div>
        ) : null}
      </div>
    </Card>
  );
}
