"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { Badge } from "@/components/ui/badge";
import { JsonView } from "@/components/ui/json-view";
import { apiFetch } from "@/lib/client/api";
import { conversationLabel } from "@/lib/conversation-label";
import type { Conversation } from "@/lib/schemas/datasets";
import { MessageView } from "./message-view";

type Agent = { name: string; description?: string; tools: string[] };

/** Agents as name, description and tool names when they have the import format's shape. */
function readAgents(agents: unknown): Agent[] | null {
  if (!Array.isArray(agents)) return null;
  const out: Agent[] = [];
  for (const a of agents) {
    if (!a || typeof a !== "object" || typeof (a as { name?: unknown }).name !== "string") return null;
    const { name, description, tools } = a as { name: string; description?: unknown; tools?: unknown };
    const toolNames = Array.isArray(tools)
      ? tools.map((t) => (t && typeof t === "object" && "name" in t ? String(t.name) : String(t)))
      : tools && typeof tools === "object"
        ? Object.keys(tools)
        : [];
    out.push({ name, description: typeof description === "string" ? description : undefined, tools: toolNames });
  }
  return out;
}

function isEmpty(v: unknown): boolean {
  return v == null || (typeof v === "object" && Object.keys(v).length === 0);
}

/**
 * The side panel with one conversation: its messages and every step. `focus` (e.g. `step:12`) is
 * scrolled to and outlined, so opening a message or step row lands on it.
 */
export function ConversationPanel({ conversationId, focus, onClose }: { conversationId: number; focus: string | null; onClose: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  const body = useRef<HTMLDivElement>(null);
  const query = useQuery({
    queryKey: ["conversation", conversationId],
    queryFn: async () => (await apiFetch<Conversation>(`/conversations/${conversationId}`)).data,
    staleTime: 60_000,
  });

  useEffect(() => {
    heading.current?.focus();
  }, [conversationId]);

  useEffect(() => {
    if (!query.data || !focus) return;
    body.current?.querySelector(`[data-entity="${focus}"]`)?.scrollIntoView({ block: "center" });
  }, [query.data, focus]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") onClose();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [onClose]);

  const c = query.data;
  const agents = c ? readAgents(c.agents) : null;
  return (
    <aside
      aria-label="Conversation"
      data-testid="conversation-panel"
      className="fixed bottom-0 right-0 top-14 z-40 flex w-[min(42rem,100vw)] flex-col border-l border-slate-200 bg-white shadow-2xl"
    >
      <div className="flex items-start gap-3 border-b border-slate-200 px-5 py-4">
        <div className="min-w-0 flex-1">
          <p className="text-xs font-medium uppercase tracking-wide text-slate-400">Conversation{c ? ` ${c.position + 1}` : ""}</p>
          <h2 ref={heading} tabIndex={-1} className="truncate text-lg font-semibold text-slate-900 focus:outline-none">
            {c ? conversationLabel({ name: c.name, position: c.position, meta: c.meta, firstUser: c.messages.find((m) => m.role === "user")?.content ?? null }) : "Loading…"}
          </h2>
          {c?.description ? <p className="mt-0.5 text-sm text-slate-500">{c.description}</p> : null}
        </div>
        <button type="button" onClick={onClose} aria-label="Close conversation" className="rounded-md px-2 py-1 text-lg text-slate-500 hover:bg-slate-100 hover:text-slate-900">
          ✕
        </button>
      </div>
      <div ref={body} className="flex-1 space-y-4 overflow-y-auto px-5 py-4">
        {query.error ? <p role="alert" className="text-sm text-red-700">Could not load the conversation: {query.error.message}</p> : null}
        {c ? (
          <>
            <div className="flex flex-wrap gap-2">
              <Badge>{c.message_count} messages</Badge>
              <Badge>{c.step_count} steps</Badge>
            </div>
            {c.goal ? (
              <section>
                <h3 className="text-xs font-semibold uppercase tracking-wide text-slate-500">User&apos;s goal</h3>
                <p className="mt-1 whitespace-pre-wrap text-sm text-slate-700">{c.goal}</p>
              </section>
            ) : null}
            {agents && agents.length ? (
              <section>
                <h3 className="text-xs font-semibold uppercase tracking-wide text-slate-500">Agents</h3>
                <ul className="mt-1 space-y-1 text-sm">
                  {agents.map((a) => (
                    <li key={a.name}>
                      <span className="font-medium text-slate-800">{a.name}</span>
                      {a.description ? <span className="text-slate-500"> — {a.description}</span> : null}
                      {a.tools.length ? <span className="block font-mono text-xs text-slate-500">tools: {a.tools.join(", ")}</span> : null}
                    </li>
                  ))}
                </ul>
              </section>
            ) : !isEmpty(c.agents) ? (
              <JsonView value={c.agents} label="Agents" />
            ) : null}
            {!isEmpty(c.meta) ? (
              <section>
                <h3 className="text-xs font-semibold uppercase tracking-wide text-slate-500">meta</h3>
                <JsonView value={c.meta} label="Conversation meta" className="mt-1" />
              </section>
            ) : null}
            <ol className="space-y-3" aria-label="Messages">
              {c.messages.map((m) => (
                <MessageView key={m.id} message={m} highlight={focus} />
              ))}
            </ol>
          </>
        ) : null}
      </div>
    </aside>
  );
}
