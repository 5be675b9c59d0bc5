import { JsonView } from "@/components/ui/json-view";
import type { Conversation } from "@/lib/schemas/datasets";

type Step = Conversation["messages"][number]["steps"][number];

/** Past this many characters a tool's result or reply is folded when `collapse` is on. */
export const LONG_TOOL_CHARS = 600;

function toolName(call: unknown): string | null {
  if (call && typeof call === "object" && "name" in call && typeof call.name === "string") return call.name;
  return null;
}

function toolArguments(call: unknown): unknown {
  if (call && typeof call === "object" && "arguments" in call) return call.arguments;
  return call;
}

function Block({ kind, children, tone }: { kind: string; children: React.ReactNode; tone: string }) {
  return (
    <div className="space-y-1">
      <p className={`text-[11px] font-semibold uppercase tracking-wide ${tone}`}>{kind}</p>
      {children}
    </div>
  );
}

/** One agent step: thinking, tool call with its arguments, tool result and outputs — all as text. */
export function StepView({ step, highlighted, collapse = false }: { step: Step; highlighted: boolean; collapse?: boolean }) {
  const name = toolName(step.tool_call);
  const resultChars = step.tool_result == null ? 0 : typeof step.tool_result === "string" ? step.tool_result.length : JSON.stringify(step.tool_result).length;
  return (
    <li
      data-entity={`step:${step.id}`}
      data-testid="conversation-step"
      className={`space-y-2 rounded-md border px-3 py-2 ${highlighted ? "border-brand-500 ring-2 ring-brand-100" : "border-slate-200"} bg-white`}
    >
      <div className="flex flex-wrap items-center gap-2 text-xs text-slate-500">
        <span className="font-medium text-slate-700">Step {step.position + 1}</span>
        {step.agent_name ? <span title="Agent">agent: {step.agent_name}</span> : null}
        {step.model_name ? <span title="Model">model: {step.model_name}</span> : null}
      </div>
      {step.thinking ? (
        <Block kind="Thinking" tone="text-slate-500">
          <p className="whitespace-pre-wrap break-words text-sm italic text-slate-600">{step.thinking}</p>
        </Block>
      ) : null}
      {step.tool_call != null ? (
        <Block kind="Tool call" tone="text-teal-700">
          <div data-testid="tool-call">
            <p className="font-mono text-sm font-semibold text-slate-900">{name ?? "(unnamed tool)"}</p>
            <JsonView value={toolArguments(step.tool_call)} label={`Arguments of ${name ?? "tool call"}`} className="mt-1" />
          </div>
        </Block>
      ) : null}
      {step.tool_result != null ? (
        <Block kind="Tool result" tone="text-violet-700">
          {collapse && resultChars > LONG_TOOL_CHARS ? (
            <details data-testid="folded-tool-result">
              <summary className="cursor-pointer text-sm text-slate-500 hover:text-slate-800">{resultChars.toLocaleString("en-US")} characters — show</summary>
              <JsonView value={step.tool_result} label="Tool result" className="mt-1" />
            </details>
          ) : (
            <JsonView value={step.tool_result} label="Tool result" />
          )}
        </Block>
      ) : null}
      {step.output_content ? (
        <Block kind="Reply" tone="text-brand-700">
          <p className="whitespace-pre-wrap break-words text-sm text-slate-800">{step.output_content}</p>
        </Block>
      ) : null}
      {step.output_structured != null ? (
        <Block kind="Structured output" tone="text-brand-700">
          <JsonView value={step.output_structured} label="Structured output" />
        </Block>
      ) : null}
    </li>
  );
}
