/**
 * Issue 33.7: JSON routes read any body: 700 MB to POST /api/datasets answered 500, 200 MB took 1 GB of
 * memory. Now every JSON body is capped (MAX_JSON_BODY_BYTES, 1 MiB): 413 naming the limit, at once when
 * Content-Length says so, after 1 MiB when the body is streamed without one; nothing is created.
 */
import { describe, expect, it } from "vitest";
import * as datasets from "@/app/api/datasets/route";
import * as session from "@/app/api/session/route";
import { call } from "@/lib/testing/http/call";
import { countTable } from "@/lib/testing/seed/rows";

function streamed(totalBytes: number): ReadableStream<Uint8Array> {
  const chunk = new TextEncoder().encode(`"${"x".repeat(64 * 1024 - 2)}"`);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= totalBytes) return controller.close();
      controller.enqueue(chunk);
      sent += chunk.byteLength;
    },
  });
}

describe("JSON bodies are capped (issue 33.7)", () => {
  it("a body declared larger than 1 MiB: 413 naming MAX_JSON_BODY_BYTES, no dataset", async () => {
    const before = await countTable("datasets");
    const name = "x".repeat(2 * 1024 * 1024);
    const res = await call(datasets.POST, "POST", "/api/datasets", { body: { name } });
    expect(res.status).toBe(413);
    expect(res.json.error).toMatchObject({ code: "payload_too_large", message: "Request body too large: at most 1 MiB (MAX_JSON_BODY_BYTES)" });
    expect(await countTable("datasets")).toBe(before);
  });

  it("a streamed body without a length (200 MB offered): 413 after the limit, the rest never kept", async () => {
    const req = new Request("http://localhost/api/datasets", { method: "POST", headers: { "content-type": "application/json" }, body: streamed(200 * 1024 * 1024), duplex: "half" } as RequestInit);
    const heapBefore = process.memoryUsage().heapUsed;
    const res = await datasets.POST(req, { params: Promise.resolve({}) });
    expect(res.status).toBe(413);
    // Kept at most the limit and a chunk; 200 MB held would show as hundreds of MB.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(100 * 1024 * 1024);
  });

  it("a sign-in body past 64 KB is refused with 413 before it is parsed", async () => {
    const res = await call(session.POST, "POST", "/api/session", { body: { token: "t".repeat(100 * 1024) }, headers: { origin: "http://localhost" } });
    expect(res.status).toBe(413);
  });

  it("a body within the limit is read as before", async () => {
    const res = await call(datasets.POST, "POST", "/api/datasets", { body: { name: "fits" } });
    expect(res.status).toBe(201);
  });
});
