import { cn } from "@/components/ui/cn";
import { JsonView } from "@/components/ui/json-view";
import type { Conversation } from "@/lib/schemas/datasets";
import { LONG_TOOL_CHARS, StepView } from "./step-view";

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

/**
 * Where a message's text goes among its steps. Imports keep an agent's reply both as the message's
 * content and as the output step where it happened: then the steps alone tell it, in order, once. A
 * reply that no step holds comes after the steps (the turn's last word); a message without steps is its text.
 */
export function replyPlacement(message: Pick<Message, "content" | "steps">): "alone" | "in-steps" | "after-steps" | "none" {
  if (message.content == null) return "none";
  if (!message.steps.length) return "alone";
  return message.steps.some((s) => s.output_content === message.content) ? "in-steps" : "after-steps";
}

function Content({ text }: { text: string }) {
  return (
    <p className="mt-2 whitespace-pre-wrap break-words text-sm text-slate-800" data-testid="message-content">
      {text}
    </p>
  );
}

/**
 * A message with its steps. Content is React text: whatever the transcript says stays text. With
 * `collapse` (the review queue), a system message and a long tool reply start folded: one click opens them.
 */
export function MessageView({ message, highlight, collapse = false }: { message: Message; highlight: string | null; collapse?: boolean }) {
  const highlighted = highlight === `message:${message.id}`;
  const placement = replyPlacement(message);
  const text = message.content ?? "";
  const folded = collapse && placement === "alone" && (message.role === "system" || (message.role === "tool" && text.length > LONG_TOOL_CHARS));
  return (
    <li
      data-entity={`message:${message.id}`}
      data-testid="conversation-message"
      data-role={message.role}
      className={cn("rounded-lg border px-4 py-3", highlighted ? "border-brand-500 ring-2 ring-brand-100" : "border-slate-200", message.role === "assistant" ? "bg-white" : "bg-slate-50/70")}
    >
      <div className="flex items-center gap-2">
        <span className={cn("rounded px-1.5 py-0.5 text-[11px] font-semibold uppercase tracking-wide", roleStyles[message.role])}>{message.role}</span>
        <span className="text-xs text-slate-400">#{message.position + 1}</span>
      </div>
      {folded ? (
        <details className="mt-2" data-testid="folded-message">
          <summary className="cursor-pointer text-sm text-slate-500 hover:text-slate-800">
            {message.role === "system" ? "System message" : "Tool reply"} · {text.length.toLocaleString("en-US")} characters — show
          </summary>
          <Content text={text} />
        </details>
      ) : placement === "alone" ? (
        <Content text={text} />
      ) : placement === "none" && !message.steps.length ? (
        <p className="mt-2 text-sm italic text-slate-400">(no content)</p>
      ) : null}
      {hasMeta(message.meta) ? (
        <details className="mt-2">
          <summary className="cursor-pointer text-xs font-medium text-slate-500 hover:text-slate-800">meta</summary>
          <JsonView value={message.meta} label="Message meta" className="mt-1" />
        </details>
      ) : null}
      {message.steps.length ? (
        <ol className="mt-3 space-y-2" aria-label={`Steps of message ${message.position + 1}`}>
          {message.steps.map((s) => (
            <StepView key={s.id} step={s} highlighted={highlight === `step:${s.id}`} collapse={collapse} />
          ))}
        </ol>
      ) : null}
      {placement === "after-steps" ? <Content text={text} /> : null}
    </li>
  );
}
