// test-stores: no-store
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it, vi } from "vitest";
import { resetConfig } from "@/lib/config";
import { startJudgeDouble } from "@/lib/testing/judge-double/server";
import { forgetJudgeProbes, judgeIsTestDouble } from "./test-double-notice";

// Every page says so while the judge is the test double (issue 51): with it, figures are scripted.
afterEach(() => {
  vi.unstubAllEnvs();
  resetConfig();
  forgetJudgeProbes();
});

function useJudge(baseURL: string | undefined) {
  if (baseURL === undefined) vi.stubEnv("OPENAI_BASE_URL", "");
  else vi.stubEnv("OPENAI_BASE_URL", baseURL);
  vi.stubEnv("OPENAI_API_KEY", "sk-test");
  resetConfig();
  forgetJudgeProbes();
}

it("knows the test double (and asks it once), a real provider's models list, and no address at all", async () => {
  const double = await startJudgeDouble({ port: 0, requireApiKey: "sk-test" });
  const provider = http.createServer((_req, res) => res.end(JSON.stringify({ object: "list", data: [{ id: "m", owned_by: "openai" }] })));
  await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve));
  try {
    useJudge(double.baseURL);
    expect(await judgeIsTestDouble()).toBe(true);
    expect(await judgeIsTestDouble()).toBe(true);
    expect(double.requests.filter((r) => r.path === "/v1/models")).toHaveLength(1);

    useJudge(`http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`);
    expect(await judgeIsTestDouble()).toBe(false);

    useJudge(undefined);
    expect(await judgeIsTestDouble()).toBe(false);
  } finally {
    await double.close();
    provider.close();
  }
});

it("never holds a page longer than it is given when the judge does not answer", async () => {
  const silent = http.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  try {
    useJudge(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`);
    const started = Date.now();
    expect(await judgeIsTestDouble(200)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
  } finally {
    silent.closeAllConnections();
    silent.close();
  }
});
