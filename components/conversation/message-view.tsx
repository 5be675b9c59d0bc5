import { cn } from "@/components/ui/cn";
import { JsonView } from "@/components/ui/json-view";
import type { Conversation } from "@/lib/schemas/datasets";
import { StepView } from "./step-view";

type Message = Conversation["messages"][number];

const roleStyles: Record<Message["role"], string> = {
  user: "bg-slate-100 text-slate-700",
  assistant: "bg-brand-50 text-brand-700",
  system: "bg-amber-50 text-amber-800",
  tool: "bg-violet-50 text-violet-700",
};

function hasMeta(meta: unknown): boolean {
  return meta != null && !(typeof meta === "object" && Object.keys(meta).length === 0);
}

/** A message with its steps. Content is React text: whatever the transcript says stays text. */
export function MessageView({ message, highlight }: { message: Message; highlight: string | null }) {
  const highlighted = highlight === `message:${message.id}`;
  return (
    <li
      data-entity={`message:${message.id}`}
      data-testid="conversation-message"
      className={cn("rounded-lg border px-4 py-3", highlighted ? "border-brand-500 ring-2 ring-brand-100" : "border-slate-200", message.role === "assistant" ? "bg-white" : "bg-slate-50/70")}
    >
      <div className="flex items-center gap-2">
        <span className={cn("rounded px-1.5 py-0.5 text-[11px] font-semibold uppercase tracking-wide", roleStyles[message.role])}>{message.role}</span>
        <span className="text-xs text-slate-400">#{message.position + 1}</span>
      </div>
      {message.content != null ? (
        <p className="mt-2 whitespace-pre-wrap break-words text-sm text-slate-800" data-testid="message-content">
          {message.content}
        </p>
      ) : (
        <p className="mt-2 text-sm italic text-slate-400">(no content)</p>
      )}
      {hasMeta(message.meta) ? (
        <details className="mt-2">
          <summary className="cursor-pointer text-xs font-medium text-slate-500 hover:text-slate-800">meta</summary>
          <JsonView value={message.meta} label="Message meta" className="mt-1" />
        </details>
      ) : null}
      {message.steps.length ? (
        <ol className="mt-3 space-y-2" aria-label={`Steps of message ${message.position + 1}`}>
          {message.steps.map((s) => (
            <StepView key={s.id} step={s} highlighted={highlight === `step:${s.id}`} />
          ))}
        </ol>
      ) : null}
    </li>
  );
}
