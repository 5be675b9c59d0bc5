/**
 * Issue 22.5: a malformed %-escape in an API path (`/api/datasets/%FF`) answered Next's plain-text 500 on
 * either store, token or not. The proxy now answers it in the API's error shape: 401 first when API_TOKEN
 * is set and the request has no credential, else 400. (The live-server check is in the reliability suite.)
 */
import { NextRequest } from "next/server";
import { unstable_doesMiddlewareMatch } from "next/experimental/testing/server";
import { afterEach, describe, expect, it } from "vitest";
import { resetConfig } from "@/lib/config";
import { config, proxy } from "@/proxy";

afterEach(() => {
  delete process.env.API_TOKEN;
  resetConfig();
});

const malformed = ["/api/datasets/%FF", "/api/conversations/%E0%A4%A", "/api/evaluation-pipeline-executions/%/events", "/api/datasets/%C0%AF/grid"];

describe("a malformed %-escape in an API path", () => {
  it("reaches the proxy (and only API paths with a % do, so bodies of other API requests are never buffered)", () => {
    for (const url of malformed) expect(unstable_doesMiddlewareMatch({ config, url }), url).toBe(true);
    expect(unstable_doesMiddlewareMatch({ config, url: "/api/datasets/1" })).toBe(false);
    expect(unstable_doesMiddlewareMatch({ config, url: "/api/datasets/import" })).toBe(false);
  });

  it("is a 400 in the error shape without a token configured", async () => {
    for (const url of malformed) {
      const res = await proxy(new NextRequest(`http://localhost${url}`));
      expect(res.status, url).toBe(400);
      expect(await res.json()).toEqual({
        error: { code: "bad_request", message: "Invalid path: a %-escape in it is not valid percent-encoded UTF-8", details: [{ path: "(path)", message: "must be valid percent-encoded UTF-8" }] },
      });
    }
    // A well-formed escape goes on to the handler (which answers 400 for a non-numeric id itself).
    expect((await proxy(new NextRequest("http://localhost/api/datasets/%31"))).headers.get("x-middleware-next")).toBe("1");
  });

  it("is a 401 first when API_TOKEN is set and missing or wrong; a 400 with the token", async () => {
    process.env.API_TOKEN = "s3cret-token";
    resetConfig();
    for (const url of malformed) {
      const anon = await proxy(new NextRequest(`http://localhost${url}`, { method: "DELETE" }));
      expect(anon.status, url).toBe(401);
      expect((await anon.json()).error.code).toBe("unauthorized");
      expect((await proxy(new NextRequest(`http://localhost${url}`, { headers: { authorization: "Bearer nope" } }))).status).toBe(401);
      expect((await proxy(new NextRequest(`http://localhost${url}`, { headers: { authorization: "Bearer s3cret-token" } }))).status).toBe(400);
    }
  });
});
