/** Which conversation and which dataset a span belongs to (pure). */
import type { Attributes, AttrValue, OtelSpan } from "./types";

const text = (v: AttrValue | undefined): string | undefined =>
  typeof v === "string" && v.trim() ? v.trim() : typeof v === "number" && Number.isFinite(v) ? String(v) : undefined;

/**
 * The conversation a span names: `gen_ai.conversation.id`, else `session.id`, else the AI SDK's
 * telemetry metadata `sessionId`; undefined when it names none (its trace is then the conversation).
 */
export function conversationKeyOf(span: Pick<OtelSpan, "attributes">): string | undefined {
  const a = span.attributes;
  return text(a["gen_ai.conversation.id"]) ?? text(a["session.id"]) ?? text(a["ai.telemetry.metadata.sessionId"]);
}

/** The default dataset name when a resource names neither `turnscope.dataset` nor `service.name`. */
export const FALLBACK_DATASET = "OpenTelemetry";

/** The dataset of a span's resource: `turnscope.dataset`, else `service.name`. */
export function datasetNameOf(resource: Attributes): string {
  return (text(resource["turnscope.dataset"]) ?? text(resource["service.name"]) ?? FALLBACK_DATASET).slice(0, 200);
}
