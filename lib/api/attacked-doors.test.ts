/**
 * Issue 33.8–33.10, each door attacked with the request that must be refused:
 * - 8: bearer guesses on page routes (307 wrong / 200 right) and on malformed `/api/…%FF` paths
 *   (401 / 400) were never counted — `API_TOKEN=hunter2` was found after 2,501 guesses while /api/me
 *   answered 429. Now they count like any other, and a locked client is refused even the right token.
 * - 9: a credential inside OPENAI_BASE_URL (user:password, `?api-key=`) was shown to every viewer.
 * - 10: any caller could create the first admin key while the server was open; /api/health answered 401
 *   once a key existed; a stream opened before a key's revocation kept streaming; `user_id` in the import
 *   form was honoured when locked; `::ffff:a.b.c.d` and `a.b.c.d` counted as two clients.
 */
import { NextRequest } from "next/server";
import { afterEach, describe, expect, it } from "vitest";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as datasets from "@/app/api/datasets/route";
import * as events from "@/app/api/evaluation-pipeline-executions/[id]/events/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as health from "@/app/api/health/route";
import * as keyItem from "@/app/api/keys/[id]/route";
import * as judgeSettings from "@/app/api/settings/judge/route";
import * as userKeys from "@/app/api/users/[id]/keys/route";
import * as users from "@/app/api/users/route";
import { forgetAuthRequired, resetThrottle } from "@/lib/auth";
import { MAX_FAILURES } from "@/lib/auth/throttle";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import { createMetric } from "@/lib/metrics";
import { waitForExecution } from "@/lib/runner/run";
import { startJudgeDouble } from "@/lib/testing/judge-double/server";
import { proxy } from "@/proxy";
import * as execution from "@/app/api/evaluation-pipeline-executions/[id]/route";
import { peerHeader } from "./client-address";

const from = (address: string, extra: Record<string, string> = {}) => ({ [peerHeader()]: address, ...extra });
const page = (path: string, headers: Record<string, string>) => proxy(new NextRequest(`http://localhost${path}`, { headers }));

afterEach(() => {
  delete process.env.API_TOKEN;
  delete process.env.OPENAI_BASE_URL;
  resetConfig();
  resetThrottle();
  forgetAuthRequired();
});

function lockWith(token: string) {
  process.env.API_TOKEN = token;
  resetConfig();
  forgetAuthRequired();
}

describe("guesses are counted at every door (issue 33.8)", () => {
  it("on a page: wrong tokens are redirected until the client is locked out, then even the right one is refused 429", async () => {
    lockWith("hunter2");
    const client = "198.51.100.7";
    expect((await page("/", from(client, { authorization: "Bearer hunter2" }))).headers.get("x-middleware-next")).toBe("1");
    for (let i = 0; i < MAX_FAILURES; i++) expect((await page("/", from(client, { authorization: `Bearer guess-${i}` }))).status).toBe(307);
    const locked = await page("/", from(client, { authorization: "Bearer hunter2" }));
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    // The lock-out is the API's too: the same client is refused on /api/datasets.
    expect((await call(datasets.GET, "GET", "/api/datasets", { headers: from(client, { authorization: "Bearer hunter2" }) })).status).toBe(429);
    // Another client is not affected.
    expect((await page("/", from("198.51.100.8", { authorization: "Bearer hunter2" }))).headers.get("x-middleware-next")).toBe("1");
  });

  it("on a malformed API path: 401 per wrong guess, then 429 even for the right token", async () => {
    lockWith("hunter2");
    const client = "198.51.100.9";
    for (let i = 0; i < MAX_FAILURES; i++) expect((await page("/api/datasets/%FF", from(client, { authorization: `Bearer guess-${i}` }))).status).toBe(401);
    const locked = await page("/api/datasets/%FF", from(client, { authorization: "Bearer hunter2" }));
    expect(locked.status).toBe(429);
    expect((await locked.json()).error.code).toBe("too_many_requests");
  });

  it("an IPv4 address and its IPv6-mapped spelling are one client", async () => {
    lockWith("hunter2");
    for (let i = 0; i < MAX_FAILURES / 2; i++) {
      await call(datasets.GET, "GET", "/api/datasets", { headers: from("203.0.113.5", { authorization: `Bearer a${i}` }) });
      await call(datasets.GET, "GET", "/api/datasets", { headers: from("::ffff:203.0.113.5", { authorization: `Bearer b${i}` }) });
    }
    expect((await call(datasets.GET, "GET", "/api/datasets", { headers: from("203.0.113.5", { authorization: "Bearer hunter2" }) })).status).toBe(429);
  });
});

describe("credentials in OPENAI_BASE_URL are never shown (issue 33.9)", () => {
  it("health and settings mask the user, password and query values", async () => {
    process.env.OPENAI_BASE_URL = "https://team:sk-secret@llm.internal.example/v1?api-key=sk-other&deployment=x";
    resetConfig();
    const shown = "https://***:***@llm.internal.example/v1?api-key=***&deployment=***";
    const h = await call(health.GET, "GET", "/api/health");
    expect(h.json.judge.base_url).toBe(shown);
    const s = await call(judgeSettings.GET, "GET", "/api/settings/judge");
    expect(s.json.base_url).toBe(shown);
    expect(h.text + s.text).not.toContain("sk-");
  });
});

describe("the open server and the locked one (issue 33.10)", () => {
  it("while open, people and keys are managed from this machine only", async () => {
    const far = await call(users.POST, "POST", "/api/users", { body: { name: "mallory", role: "admin" }, headers: from("192.0.2.66") });
    expect(far.status).toBe(403);
    expect(far.json.error.message).toMatch(/from this machine only/);
    const near = await call(users.POST, "POST", "/api/users", { body: { name: "owner", role: "admin" }, headers: from("127.0.0.1") });
    expect(near.status).toBe(201);
    const farKey = await call(userKeys.POST, "POST", "/x", { params: { id: near.json.id }, body: { name: "k" }, headers: from("::ffff:192.0.2.66") });
    expect(farKey.status).toBe(403);
    // Reads and other writes are not restricted by this rule (the open mode is the one-person mode).
    expect((await call(datasets.GET, "GET", "/api/datasets", { headers: from("192.0.2.66") })).status).toBe(200);
  });

  it("/api/health answers a probe without a credential (status, database, version; no judge), and everything to a caller with one", async () => {
    lockWith("hunter2");
    const probe = await call(health.GET, "GET", "/api/health");
    expect(probe.status).toBe(200);
    expect(probe.json).toEqual({ status: "ok", database: "ok", version: expect.any(String) });
    const full = await call(health.GET, "GET", "/api/health", { headers: { authorization: "Bearer hunter2" } });
    expect(full.json.judge).toMatchObject({ configured: expect.any(Boolean) });
  });

  it("user_id in the import form names nobody once the server is locked", async () => {
    lockWith("hunter2");
    const file = JSON.stringify({ conversations: [{ name: "c", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] }] });
    const res = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "owned", user_id: "victim" }, headers: { authorization: "Bearer hunter2" } });
    expect(res.status).toBe(201);
    const listed = await call(datasets.GET, "GET", `/api/datasets?user_id=victim`, { headers: { authorization: "Bearer hunter2" } });
    expect(listed.json).toEqual([]);
    const mine = await call(datasets.GET, "GET", `/api/datasets?user_id=admin`, { headers: { authorization: "Bearer hunter2" } });
    expect(mine.json.map((d: { name: string }) => d.name)).toContain("owned");
  });

  it("a stream opened before its key was revoked ends", async () => {
    const admin = await call(users.POST, "POST", "/api/users", { body: { name: "streamer", role: "admin" } });
    const first = await call(userKeys.POST, "POST", "/x", { params: { id: admin.json.id }, body: { name: "a" } });
    const second = await call(userKeys.POST, "POST", "/x", { params: { id: admin.json.id }, body: { name: "b" }, headers: { authorization: `Bearer ${first.json.key}` } });
    const auth = { authorization: `Bearer ${second.json.key}` };
    const double = await startJudgeDouble();
    double.setDefault({ kind: "hang" });
    process.env.OPENAI_BASE_URL = double.baseURL;
    resetConfig();
    const file = JSON.stringify({ conversations: [{ name: "c", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] }] });
    const ds = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "streamed" }, headers: auth });
    await createMetric({ dataset_id: ds.json.dataset.id, name: "Helpful", evaluation_level: "message", output_type: "progress", prompt: "Is @CURRENT_MESSAGE.output helpful?" });
    // The judge hangs: the run stays running, so only the revocation can end its stream.
    const started = await call(run.POST, "POST", "/x", { body: { dataset_id: ds.json.dataset.id }, headers: auth });
    expect(started.status).toBe(202);
    const res = await events.GET(new Request(`http://localhost/api/evaluation-pipeline-executions/${started.json.id}/events`, { headers: auth }), { params: Promise.resolve({ id: String(started.json.id) }) });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    const revoked = await call(keyItem.DELETE, "DELETE", "/x", { params: { id: second.json.id }, headers: { authorization: `Bearer ${first.json.key}` } });
    expect(revoked.status).toBe(204);
    // Read until the stream ends: within a few seconds of the revocation in this process (the check runs every second).
    const t0 = Date.now();
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      expect(Date.now() - t0).toBeLessThan(10_000);
    }
    await call(execution.DELETE, "DELETE", "/x", { params: { id: started.json.id }, headers: { authorization: `Bearer ${first.json.key}` } });
    await waitForExecution(started.json.id);
    await double.close();
  }, 20_000);
});
