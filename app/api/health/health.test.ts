import { afterEach, describe, expect, it } from "vitest";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { GET } from "./route";

afterEach(() => {
  delete process.env.OPENAI_API_KEY;
  delete process.env.OPENAI_BASE_URL;
  resetConfig();
});

describe("GET /api/health", () => {
  it("reports the database, the judge configuration and the version", async () => {
    const res = await call(GET, "GET", "/api/health");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      status: "ok",
      database: "ok",
      judge: { configured: false, base_url: null, default_model: "gpt-4o-mini" },
    });
    expect(res.json.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("says the judge is configured without ever showing the key", async () => {
    process.env.OPENAI_API_KEY = "sk-secret-value-123";
    process.env.OPENAI_BASE_URL = "http://127.0.0.1:9/v1";
    resetConfig();
    const res = await call(GET, "GET", "/api/health");
    expect(res.json.judge).toEqual({ configured: true, base_url: "http://127.0.0.1:9/v1", default_model: "gpt-4o-mini" });
    expect(res.text).not.toContain("sk-secret-value-123");
  });
});
