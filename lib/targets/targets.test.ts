/**
 * Issue 48, findings 1–7, attacked through the public routes and the target clients: a target is written
 * by annotators but makes the server send requests, so no caller below admin may make it send the
 * server's secrets or another user's anywhere, and every call has a deadline and a byte budget that hold.
 * Each "listener" here is a server of the attacker's, on loopback, recording what reached it.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import * as userKeys from "@/app/api/users/[id]/keys/route";
import * as users from "@/app/api/users/route";
import * as targetItem from "@/app/api/targets/[id]/route";
import * as targets from "@/app/api/targets/route";
import { forgetAuthRequired, resetThrottle } from "@/lib/auth";
import { resetConfig } from "@/lib/config";
import type { TargetRow } from "@/db/repositories/targets";
import { call } from "@/lib/testing/http/call";
import { callTarget, TargetError } from "./clients";

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };
type Listener = { url: string; seen: Seen[]; close(): Promise<void> };

/** A loopback server of the attacker's: records every request, answers with `respond`. */
async function listen(respond: (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => void = (_q, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"reply":"ok"}')): Promise<Listener> {
  const seen: Seen[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const s = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString() };
      seen.push(s);
      respond(req, res, s);
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const keys: { admin: string; anna: string; bob: string; viewer: string } = { admin: "", anna: "", bob: "", viewer: "" };
const listeners: Listener[] = [];
const track = async (l: Promise<Listener>) => {
  const out = await l;
  listeners.push(out);
  return out;
};

const secretEnv = { API_TOKEN: process.env.API_TOKEN, OPENAI_API_KEY: process.env.OPENAI_API_KEY };

beforeAll(async () => {
  delete process.env.API_TOKEN;
  resetConfig();
  const make = async (name: string, role: string) => (await call(users.POST, "POST", "/api/users", { body: { name, role } })).json.id as number;
  const ids = { admin: await make("root48", "admin"), anna: await make("anna48", "annotator"), bob: await make("bob48", "annotator"), viewer: await make("vic48", "viewer") };
  const key = async (id: number, who?: string) => (await call(userKeys.POST, "POST", "/x", { params: { id }, body: { name: "k" }, headers: who ? bearer(who) : {} })).json.key as string;
  keys.admin = await key(ids.admin);
  keys.anna = await key(ids.anna, keys.admin);
  keys.bob = await key(ids.bob, keys.admin);
  keys.viewer = await key(ids.viewer, keys.admin);
  forgetAuthRequired();
});

afterEach(() => {
  for (const k of ["TARGET_SECRET_ENV", "TARGET_DENY_NETWORKS", "TARGET_ALLOW_NETWORKS", "TARGET_MAX_REPLY_BYTES", "OPENAI_API_KEY"]) delete process.env[k];
  if (secretEnv.OPENAI_API_KEY !== undefined) process.env.OPENAI_API_KEY = secretEnv.OPENAI_API_KEY;
  resetConfig();
  resetThrottle();
});

afterAll(async () => {
  await Promise.all(listeners.map((l) => l.close()));
});

const create = (body: Record<string, unknown>, key = keys.anna) => call(targets.POST, "POST", "/api/targets", { body, headers: bearer(key) });
const httpTarget = (url: string, extra: Record<string, unknown> = {}) => ({ name: "agent", kind: "http_json", url, request_template: '{"q": "{{last_user_message}}"}', reply_path: "reply", ...extra });

/** A stored target as the generation engine reads it. */
const row = (over: Partial<TargetRow>): TargetRow => ({
  id: 1, userId: "anna48", name: "agent", kind: "http_json", url: "http://127.0.0.1:9/x", model: null, headers: null, requestTemplate: '{"q": "{{last_user_message}}"}',
  replyPath: "reply", stepsPath: null, maxConcurrency: 1, timeoutMs: 5_000, createdAt: "", updatedAt: "", ...over,
});
const ask = (t: TargetRow, signal = new AbortController().signal) => callTarget(t, { turns: [{ role: "user", content: "hello" }], sessionId: "s", tools: [], signal });

describe("1. the server's environment", () => {
  it("a header may not read an environment variable an admin did not list: API_TOKEN, OPENAI_API_KEY refused with 422, nothing stored", async () => {
    process.env.OPENAI_API_KEY = "sk-server-judge-key";
    resetConfig();
    const l = await track(listen());
    for (const name of ["API_TOKEN", "OPENAI_API_KEY", "DATABASE_PATH"]) {
      const res = await create(httpTarget(l.url, { headers: { "x-leak": `\${env:${name}}` } }));
      expect(res.status, res.text).toBe(422);
      expect(res.json.error.message).toContain("TARGET_SECRET_ENV");
      expect(res.json.error.message).toContain(name);
    }
    expect((await call(targets.GET, "GET", "/api/targets", { headers: bearer(keys.admin) })).json.filter((t: { url: string }) => t.url === l.url)).toHaveLength(0);
    expect(l.seen).toHaveLength(0);
  });

  it("a name an admin listed is allowed and sent; a stored target whose name was later taken off the list sends nothing", async () => {
    process.env.AGENT_SECRET_48 = "agent-only-secret";
    process.env.TARGET_SECRET_ENV = "AGENT_SECRET_48";
    resetConfig();
    const l = await track(listen());
    const res = await create(httpTarget(l.url, { headers: { "x-agent-key": "${env:AGENT_SECRET_48}" } }));
    expect(res.status, res.text).toBe(201);
    const reply = await ask(row({ url: l.url, headers: { "x-agent-key": "${env:AGENT_SECRET_48}" } }));
    expect(reply.text).toBe("ok");
    expect(l.seen[0].headers["x-agent-key"]).toBe("agent-only-secret");
    delete process.env.TARGET_SECRET_ENV;
    resetConfig();
    await expect(ask(row({ url: l.url, headers: { "x-leak": "${env:OPENAI_API_KEY}" } }))).rejects.toThrow(/TARGET_SECRET_ENV/);
    expect(l.seen).toHaveLength(1);
    delete process.env.AGENT_SECRET_48;
  });
});

describe("2. other people's targets", () => {
  it("an annotator cannot change or delete another's target (403); its owner and an admin can; a new URL drops the stored headers", async () => {
    const home = await track(listen());
    const evil = await track(listen());
    const made = await create(httpTarget(home.url, { headers: { authorization: "Bearer admins-own-agent-key" } }), keys.anna);
    expect(made.status, made.text).toBe(201);
    const id = made.json.id as number;
    const byBob = await call(targetItem.PATCH, "PATCH", "/x", { params: { id }, body: { url: evil.url }, headers: bearer(keys.bob) });
    expect(byBob.status).toBe(403);
    expect(byBob.json.error.message).toContain("owner");
    expect((await call(targetItem.DELETE, "DELETE", "/x", { params: { id }, headers: bearer(keys.bob) })).status).toBe(403);
    expect((await call(targetItem.PATCH, "PATCH", "/x", { params: { id }, body: { url: evil.url }, headers: bearer(keys.viewer) })).status).toBe(403);
    // The owner moves it: the key set for the old address does not follow it.
    const moved = await call(targetItem.PATCH, "PATCH", "/x", { params: { id }, body: { url: evil.url }, headers: bearer(keys.anna) });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.json.header_names).toEqual([]);
    // An unchanged URL keeps them (a rename is not a move).
    const again = await create(httpTarget(home.url, { headers: { authorization: "Bearer k2" } }), keys.anna);
    const renamed = await call(targetItem.PATCH, "PATCH", "/x", { params: { id: again.json.id }, body: { name: "renamed" }, headers: bearer(keys.admin) });
    expect(renamed.status).toBe(200);
    expect(renamed.json.header_names).toEqual(["authorization"]);
    expect((await call(targetItem.DELETE, "DELETE", "/x", { params: { id: again.json.id }, headers: bearer(keys.admin) })).status).toBe(204);
    expect(evil.seen).toHaveLength(0);
  });
});

describe("3. redirects", () => {
  it("a redirect to another origin (301, 302, 303, 307, 308) is not followed: the secret header never reaches it", async () => {
    const elsewhere = await track(listen());
    for (const status of [301, 302, 303, 307, 308]) {
      const redirecting = await track(listen((_q, res) => res.writeHead(status, { location: `${elsewhere.url}/steal` }).end()));
      const error = await ask(row({ url: redirecting.url, headers: { "api-key": "custom-secret" } })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TargetError);
      expect(String((error as Error).message)).toMatch(/another origin/);
      expect(redirecting.seen).toHaveLength(1);
    }
    expect(elsewhere.seen).toHaveLength(0);
  });

  it("a redirect within the target's own origin is followed with its headers", async () => {
    const l = await track(listen((req, res) => (req.url === "/old" ? res.writeHead(307, { location: "/new" }).end() : res.writeHead(200, { "content-type": "application/json" }).end('{"reply":"moved"}'))));
    const reply = await ask(row({ url: `${l.url}/old`, headers: { "api-key": "custom-secret" } }));
    expect(reply.text).toBe("moved");
    expect(l.seen.map((s) => [s.url, s.headers["api-key"]])).toEqual([["/old", "custom-secret"], ["/new", "custom-secret"]]);
  });
});

describe("4. credentials inside a URL", () => {
  it("are masked for viewers and annotators (the list and one target), shown to admins, and never written into an error", async () => {
    const l = await track(listen((_q, res) => res.writeHead(500).end("down")));
    const withCreds = `${l.url.replace("http://", "http://agentuser:hunter2pass@")}/chat?api-key=querysecret99&mode=fast`;
    const made = await create(httpTarget(withCreds), keys.anna);
    expect(made.status, made.text).toBe(201);
    for (const key of [keys.viewer, keys.anna, keys.bob]) {
      const list = await call(targets.GET, "GET", "/api/targets", { headers: bearer(key) });
      const one = await call(targetItem.GET, "GET", "/x", { params: { id: made.json.id }, headers: bearer(key) });
      for (const text of [list.text, one.text]) {
        expect(text).not.toContain("hunter2pass");
        expect(text).not.toContain("querysecret99");
        expect(text).not.toContain("agentuser");
      }
      expect(one.json.url).toContain("api-key=***");
    }
    const asAdmin = await call(targetItem.GET, "GET", "/x", { params: { id: made.json.id }, headers: bearer(keys.admin) });
    expect(asAdmin.json.url).toBe(withCreds);
    // The error a generated conversation keeps in meta.error.
    const error = (await ask(row({ url: withCreds })).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(TargetError);
    expect(error.message).toMatch(/answered 500/);
    // The URL's user and password went as Basic authentication, as curl sends them, to the target's own origin only.
    expect(l.seen[0].headers.authorization).toBe(`Basic ${Buffer.from("agentuser:hunter2pass").toString("base64")}`);
    expect(l.seen[0].url).toBe("/chat?api-key=querysecret99&mode=fast");
    const refused = (await ask(row({ url: withCreds.replace(/:\d+\//, ":9/") })).catch((e: unknown) => e)) as Error;
    for (const message of [error.message, refused.message]) {
      expect(message).not.toContain("hunter2pass");
      expect(message).not.toContain("querysecret99");
    }
  });
});

describe("5. where a target may point", () => {
  it("link-local, metadata and unspecified addresses are refused from an annotator (422), in every spelling", async () => {
    for (const url of ["http://169.254.169.254/latest/meta-data", "http://metadata.google.internal/computeMetadata/v1", "http://0.0.0.0:3000/", "http://[::ffff:169.254.169.254]/", "http://[fe80::1]/", "http://100.100.100.200/"]) {
      const res = await create(httpTarget(url));
      expect(res.status, `${url}: ${res.text}`).toBe(422);
      expect(res.json.error.details[0].path).toBe("url");
    }
  });

  it("a name that resolves to a denied address is refused when connecting, and nothing is sent", async () => {
    const l = await track(listen());
    process.env.TARGET_DENY_NETWORKS = "127.0.0.0/8,::1/128";
    resetConfig();
    const port = new URL(l.url).port;
    // A name is accepted when saved (it may resolve elsewhere later), then checked on the address connected.
    expect((await create(httpTarget(`http://localhost:${port}/`))).status).toBe(201);
    const error = (await ask(row({ url: `http://localhost:${port}/`, headers: { "api-key": "x" } })).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(TargetError);
    expect(error.message).toMatch(/refused to connect: localhost resolves to 127\.0\.0\.1 is in TARGET_DENY_NETWORKS/);
    expect((await create(httpTarget(`${l.url}/`))).status).toBe(422);
    expect(l.seen).toHaveLength(0);
    // An admin's allow-list lets a team's own range through.
    process.env.TARGET_ALLOW_NETWORKS = "127.0.0.1/32";
    resetConfig();
    expect((await ask(row({ url: `http://localhost:${port}/` }))).text).toBe("ok");
  });
});

describe("6. a target that drips keeps its deadline, even when the collector runs", () => {
  it("http_json and ai_sdk_ui fail at timeout_ms naming it, with gc() forced while the target drips a byte a second", async () => {
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as () => void;
    const drip = await track(
      listen((_q, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"reply":"');
        const timer = setInterval(() => res.write("a"), 1000);
        res.on("close", () => clearInterval(timer));
      }),
    );
    const collect = setInterval(gc, 50);
    try {
      const started = Date.now();
      const results = await Promise.allSettled([ask(row({ url: drip.url, timeoutMs: 1500 })), ask(row({ url: drip.url, kind: "ai_sdk_ui", timeoutMs: 1500 }))]);
      for (const r of results) {
        expect(r.status).toBe("rejected");
        expect(String((r as PromiseRejectedResult).reason.message)).toMatch(/no answer within 1500 ms \(the target's timeout_ms\)/);
      }
      // Generous for a loaded machine; without a timer of its own the call would drip on for ever.
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      clearInterval(collect);
    }
  }, 30_000);
});

describe("7. a target's reply has a size limit", () => {
  it("a reply past TARGET_MAX_REPLY_BYTES fails naming it, declared or streamed without end; a timeout after the headers is named as one", async () => {
    process.env.TARGET_MAX_REPLY_BYTES = String(64 * 1024);
    resetConfig();
    const payload = JSON.stringify({ reply: "x".repeat(200_000) });
    const big = await track(listen((_q, res) => res.writeHead(200, { "content-type": "application/json", "content-length": String(payload.length) }).end(payload)));
    const undeclared = await track(listen((_q, res) => res.writeHead(200, { "content-type": "application/json" }).end(payload)));
    const endless = await track(
      listen((_q, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const timer = setInterval(() => res.write(`data: ${JSON.stringify({ type: "text-delta", id: "t", delta: "y".repeat(8192) })}\n\n`), 1);
        res.on("close", () => clearInterval(timer));
      }),
    );
    await expect(ask(row({ url: big.url }))).rejects.toThrow(/replied more than TARGET_MAX_REPLY_BYTES \(65536 bytes\): it declared/);
    await expect(ask(row({ url: undeclared.url }))).rejects.toThrow(/replied more than TARGET_MAX_REPLY_BYTES \(65536 bytes\)$/);
    await expect(ask(row({ url: endless.url, kind: "ai_sdk_ui", timeoutMs: 60_000 }))).rejects.toThrow(/replied more than TARGET_MAX_REPLY_BYTES \(65536 bytes\)/);
    const stalls = await track(listen((_q, res) => res.writeHead(200, { "content-type": "application/json" }).write('{"reply": "')));
    await expect(ask(row({ url: stalls.url, timeoutMs: 300 }))).rejects.toThrow(/no answer within 300 ms/);
  });

  it("an unknown kind is an error, never another kind's client", async () => {
    const l = await track(listen());
    await expect(ask(row({ url: l.url, kind: "carrier_pigeon" as TargetRow["kind"] }))).rejects.toThrow(/no client serves/);
    expect(l.seen).toHaveLength(0);
  });
});
