/** The span as lib/otel reads it, the same whether it came as OTLP protobuf or OTLP JSON. */

/** An attribute value: OTLP's AnyValue as plain JSON (int64 beyond 2^53 stays a decimal string). */
export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };
export type Attributes = Record<string, AttrValue>;

export type OtelEvent = { name: string; timeNs: string; attributes: Attributes };

export type OtelSpan = {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: number;
  /** Nanoseconds since the epoch, as a 19-digit decimal string (sorts as text). */
  startNs: string;
  endNs: string;
  attributes: Attributes;
  events: OtelEvent[];
  status: { code: number; message?: string };
  resource: Attributes;
  scope: { name: string; version?: string };
};
