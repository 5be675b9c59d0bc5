/**
 * Identity and roles through the public surface (route handlers), as an attacker would try them: a
 * caller's name is never a header once credentials exist, viewers cannot write, revoked keys and ended
 * sessions are refused, and wrong credentials are throttled per real client address.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { peerHeader } from "@/lib/api/client-address";
import { forgetAuthRequired, resetThrottle } from "@/lib/auth";
import * as users from "@/app/api/users/route";
import * as userItem from "@/app/api/users/[id]/route";
import * as userKeys from "@/app/api/users/[id]/keys/route";
import * as keyItem from "@/app/api/keys/[id]/route";
import * as me from "@/app/api/me/route";
import * as mappings from "@/app/api/import-mappings/route";
import * as mappingItem from "@/app/api/import-mappings/[id]/route";
import * as datasets from "@/app/api/datasets/route";
import * as session from "@/app/api/session/route";

const bearer = (key: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, ...extra });
const mapping = { messages: "turns", role: "speaker", content: "text" };

let adminKey: string;
let annotatorKey: string;
let viewerKey: string;
let aliceKey: string;
let ids: { admin: number; annotator: number; viewer: number; alice: number };

afterEach(() => {
  delete process.env.API_TOKEN;
  delete process.env.TRUSTED_PROXIES;
  resetConfig();
  resetThrottle();
});

beforeAll(async () => {
  // One-person mode: no credential configured yet, so anyone is an admin and names themselves.
  const open = await call(me.GET, "GET", "/api/me", { headers: { "x-user-id": "ana" } });
  expect(open.json).toMatchObject({ user: "ana", role: "admin", via: "open", auth_required: false });
  const make = async (name: string, role: string) => {
    const res = await call(users.POST, "POST", "/api/users", { body: { name, role } });
    expect(res.status).toBe(201);
    return res.json.id as number;
  };
  ids = { admin: await make("root", "admin"), annotator: await make("anna", "annotator"), viewer: await make("vic", "viewer"), alice: await make("alice", "annotator") };
  // The first key must be an admin's: otherwise nobody could manage the team once keys are required.
  const refused = await call(userKeys.POST, "POST", "/api/users/x/keys", { params: { id: ids.viewer }, body: { name: "first" } });
  expect(refused.status).toBe(409);
  const key = async (id: number, who?: string) => {
    const res = await call(userKeys.POST, "POST", "/api/users/x/keys", { params: { id }, body: { name: "laptop" }, headers: who ? bearer(who) : {} });
    expect(res.status).toBe(201);
    expect(res.json.key).toMatch(/^tsk_/);
    expect(res.json.prefix).toBe(res.json.key.slice(0, 12));
    return res.json.key as string;
  };
  adminKey = await key(ids.admin);
  annotatorKey = await key(ids.annotator, adminKey);
  viewerKey = await key(ids.viewer, adminKey);
  aliceKey = await key(ids.alice, adminKey);
});

describe("identity from the credential", () => {
  it("once a key exists, a request without one is refused and X-User-Id alone is not an identity", async () => {
    expect((await call(me.GET, "GET", "/api/me", { headers: { "x-user-id": "root" } })).status).toBe(401);
    expect((await call(datasets.GET, "GET", "/api/datasets")).status).toBe(401);
    const who = await call(me.GET, "GET", "/api/me", { headers: bearer(annotatorKey, { "x-user-id": "root" }) });
    expect(who.json).toMatchObject({ user: "anna", role: "annotator", via: "key", auth_required: true });
  });

  it("another user's saved mappings cannot be read, replaced or deleted by naming them in X-User-Id", async () => {
    const saved = await call(mappings.POST, "POST", "/api/import-mappings", { body: { name: "mine", mapping }, headers: bearer(aliceKey) });
    expect(saved.status).toBe(201);
    const asAlice = bearer(annotatorKey, { "x-user-id": "alice" });
    expect((await call(mappings.GET, "GET", "/api/import-mappings", { headers: asAlice })).json).toEqual([]);
    expect((await call(mappingItem.DELETE, "DELETE", `/api/import-mappings/${saved.json.id}`, { params: { id: saved.json.id }, headers: asAlice })).status).toBe(404);
    const other = await call(mappings.POST, "POST", "/api/import-mappings", { body: { name: "mine", mapping: { ...mapping, content: "evil" } }, headers: asAlice });
    expect(other.status).toBe(201); // anna's own mapping of that name, not a replacement of alice's
    const alices = await call(mappings.GET, "GET", "/api/import-mappings", { headers: bearer(aliceKey) });
    expect(alices.json.map((m: { mapping: { content: string } }) => m.mapping.content)).toEqual(["text"]);
  });

  it("a key's user is the dataset's owner, whatever user_id the body claims", async () => {
    const created = await call(datasets.POST, "POST", "/api/datasets", { body: { name: "owned", user_id: "root" }, headers: bearer(annotatorKey) });
    expect(created.status).toBe(201);
    expect(created.json.user_id).toBe("anna");
  });
});

describe("roles", () => {
  it("viewers read but cannot write; annotators write but cannot manage people; admins can", async () => {
    expect((await call(datasets.GET, "GET", "/api/datasets", { headers: bearer(viewerKey) })).status).toBe(200);
    const denied = await call(datasets.POST, "POST", "/api/datasets", { body: { name: "nope" }, headers: bearer(viewerKey) });
    expect(denied.status).toBe(403);
    expect(denied.json.error).toMatchObject({ code: "forbidden" });
    expect(denied.json.error.message).toMatch(/annotator/);
    expect((await call(users.GET, "GET", "/api/users", { headers: bearer(annotatorKey) })).status).toBe(403);
    expect((await call(users.POST, "POST", "/api/users", { body: { name: "eve", role: "admin" }, headers: bearer(annotatorKey) })).status).toBe(403);
    const listed = await call(users.GET, "GET", "/api/users", { headers: bearer(adminKey) });
    expect(listed.status).toBe(200);
    expect(listed.text).not.toMatch(/tsk_[A-Za-z0-9_-]{20}/); // prefixes only, never a key
    expect(listed.text).not.toContain("key_hash");
  });

  it("a role change applies at once, also to a page session opened before it", async () => {
    const signIn = await call(session.POST, "POST", "/api/session", { body: { token: aliceKey } });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0];
    expect((await call(datasets.POST, "POST", "/api/datasets", { body: { name: "before" }, headers: { cookie } })).status).toBe(201);
    expect((await call(userItem.PATCH, "PATCH", "/api/users/x", { params: { id: ids.alice }, body: { role: "viewer" }, headers: bearer(adminKey) })).status).toBe(200);
    expect((await call(datasets.POST, "POST", "/api/datasets", { body: { name: "after" }, headers: { cookie } })).status).toBe(403);
    expect((await call(datasets.POST, "POST", "/api/datasets", { body: { name: "after" }, headers: bearer(aliceKey) })).status).toBe(403);
    await call(userItem.PATCH, "PATCH", "/api/users/x", { params: { id: ids.alice }, body: { role: "annotator" }, headers: bearer(adminKey) });
  });

  it("the last admin key can be neither revoked nor demoted away", async () => {
    const admins = (await call(users.GET, "GET", "/api/users", { headers: bearer(adminKey) })).json.filter((u: { role: string }) => u.role === "admin");
    const keyId = admins[0].keys[0].id;
    expect((await call(keyItem.DELETE, "DELETE", `/api/keys/${keyId}`, { params: { id: keyId }, headers: bearer(adminKey) })).status).toBe(409);
    expect((await call(userItem.PATCH, "PATCH", "/api/users/x", { params: { id: ids.admin }, body: { role: "viewer" }, headers: bearer(adminKey) })).status).toBe(409);
    expect((await call(me.GET, "GET", "/api/me", { headers: bearer(adminKey) })).json.role).toBe("admin");
  });
});

describe("revocation", () => {
  it("a revoked key and the sessions opened with it are refused at once", async () => {
    const created = await call(userKeys.POST, "POST", "/api/users/x/keys", { params: { id: ids.annotator }, body: { name: "temp" }, headers: bearer(adminKey) });
    const temp = created.json.key as string;
    const cookie = (await call(session.POST, "POST", "/api/session", { body: { token: temp } })).headers.get("set-cookie")!.split(";")[0];
    expect((await call(me.GET, "GET", "/api/me", { headers: { cookie } })).status).toBe(200);
    expect((await call(keyItem.DELETE, "DELETE", `/api/keys/${created.json.id}`, { params: { id: created.json.id }, headers: bearer(adminKey) })).status).toBe(204);
    expect((await call(me.GET, "GET", "/api/me", { headers: bearer(temp) })).status).toBe(401);
    expect((await call(me.GET, "GET", "/api/me", { headers: { cookie } })).status).toBe(401);
    const listed = await call(users.GET, "GET", "/api/users", { headers: bearer(adminKey) });
    const revoked = listed.json.flatMap((u: { keys: { id: number; revoked_at: string | null }[] }) => u.keys).find((k: { id: number }) => k.id === created.json.id);
    expect(revoked.revoked_at).toBeTruthy();
  });

  it("API_TOKEN stays the admin's key, as user admin", async () => {
    process.env.API_TOKEN = "legacy-token";
    resetConfig();
    forgetAuthRequired();
    const who = await call(me.GET, "GET", "/api/me", { headers: bearer("legacy-token", { "x-user-id": "vic" }) });
    expect(who.json).toMatchObject({ user: "admin", role: "admin", via: "token" });
  });
});

describe("throttling wrong credentials", () => {
  const from = (address: string, extra: Record<string, string> = {}) => ({ [peerHeader()]: address, ...extra });

  it("counts wrong bearer keys per socket address, whatever X-Forwarded-For says", async () => {
    for (let i = 0; i < 10; i++) {
      const res = await call(datasets.GET, "GET", "/api/datasets", { headers: from("198.51.100.7", bearer(`tsk_wrong${i}`, { "x-forwarded-for": `10.0.0.${i}` })) });
      expect(res.status).toBe(401);
    }
    // The right key from the same socket is refused too while locked: a guess cannot be confirmed.
    const locked = await call(me.GET, "GET", "/api/me", { headers: from("198.51.100.7", bearer(adminKey, { "x-forwarded-for": "10.9.9.9" })) });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    // Sign-in from that socket is locked as well.
    const signIn = await call(session.POST, "POST", "/api/session", { body: { token: adminKey }, headers: from("198.51.100.7") });
    expect(signIn.status).toBe(429);
  });

  it("an attacker naming a victim in X-Forwarded-For does not lock the victim out", async () => {
    for (let i = 0; i < 12; i++) await call(me.GET, "GET", "/api/me", { headers: from("198.51.100.66", bearer("tsk_nope", { "x-forwarded-for": "192.0.2.10" })) });
    const victim = await call(me.GET, "GET", "/api/me", { headers: from("192.0.2.10", bearer(viewerKey)) });
    expect(victim.status).toBe(200);
  });

  it("behind a trusted proxy, X-Forwarded-For names the client", async () => {
    process.env.TRUSTED_PROXIES = "127.0.0.1/8";
    resetConfig();
    for (let i = 0; i < 10; i++) await call(me.GET, "GET", "/api/me", { headers: from("127.0.0.1", bearer("tsk_nope", { "x-forwarded-for": "203.0.113.50" })) });
    expect((await call(me.GET, "GET", "/api/me", { headers: from("127.0.0.1", bearer(viewerKey, { "x-forwarded-for": "203.0.113.50" })) })).status).toBe(429);
    // Another client behind the same proxy is not affected.
    expect((await call(me.GET, "GET", "/api/me", { headers: from("127.0.0.1", bearer(viewerKey, { "x-forwarded-for": "203.0.113.51" })) })).status).toBe(200);
  });
});
