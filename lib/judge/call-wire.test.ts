import { APICallError } from "ai";
import { describe, expect, it } from "vitest";
import { JudgeTimeoutError } from "./call";
import { fromWireError, toWireError } from "./call-wire";
import { classifyError } from "./retry";

/** An error as the judge thread sends it: through the wire form and a structured clone. */
const across = (error: unknown) => fromWireError(structuredClone(toWireError(error)));

describe("errors from the judge thread", () => {
  it("a provider's 429 arrives as an APICallError with its status, headers and body", () => {
    const original = new APICallError({
      message: "Too Many Requests",
      url: "http://127.0.0.1:9/v1/chat/completions",
      requestBodyValues: { model: "m" },
      statusCode: 429,
      responseHeaders: { "retry-after": "3" },
      responseBody: '{"error":"slow down"}',
      isRetryable: true,
    });
    const rebuilt = across(original);
    expect(APICallError.isInstance(rebuilt)).toBe(true);
    expect(rebuilt).toMatchObject({ message: "Too Many Requests", statusCode: 429, responseHeaders: { "retry-after": "3" }, responseBody: '{"error":"slow down"}', isRetryable: true });
    expect(classifyError(rebuilt)).toEqual(classifyError(original));
    expect(classifyError(rebuilt)).toMatchObject({ kind: "rate_limit", retryAfterMs: 3000 });
  });

  it("5xx, other 4xx, time-outs and network failures are sorted as they were in process", () => {
    const api = (statusCode: number) =>
      new APICallError({ message: `status ${statusCode}`, url: "u", requestBodyValues: {}, statusCode, responseHeaders: {}, isRetryable: statusCode >= 500 });
    const network = new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) });
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    const cases: Array<[unknown, string]> = [
      [api(500), "server"],
      [api(400), "client"],
      [new JudgeTimeoutError("judge call timed out after 300 ms"), "timeout"],
      [network, "network"],
      [reset, "network"],
      [new RangeError("something else"), "other"],
    ];
    for (const [error, kind] of cases) {
      const rebuilt = across(error);
      expect(classifyError(rebuilt).kind).toBe(kind);
      expect(rebuilt.message).toBe((error as Error).message);
      expect(rebuilt.name).toBe((error as Error).name);
    }
    expect(across(network)).toBeInstanceOf(TypeError);
    expect((across(network).cause as { code: string }).code).toBe("ECONNREFUSED");
  });

  it("anything thrown that is not an Error still arrives as an Error with its text", () => {
    expect(across("plain string").message).toBe("plain string");
    expect(across(undefined).message).toBe("undefined");
  });
});
