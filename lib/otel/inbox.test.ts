/**
 * The trace inbox (issue 50, SQLite): an export is answered once decoded and written beside the database,
 * not once SQLite's writer has stored it; its spans are stored in the background; what a stopped server left
 * is stored at the next start; a damaged file is moved aside, never dropped; past OTEL_INBOX_MAX_BYTES (or
 * with it 0) an export is stored before it is answered; the online rules' sweep waits for the inbox.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { databaseFile } from "@/db/sqlite-database";
import { rawRows } from "@/db/store";
import { resetConfig } from "@/lib/config";
import { drainInbox, inboxCaughtUp, inboxFiles, stopInboxPass, storeWaitingExports } from "@/lib/otel/inbox";
import { flushAssembly, threadStore } from "@/lib/otel/ingest";
import { inboxDir, spoolExportOnThread } from "@/lib/otel/store-export";
import { holdSqliteWriter } from "@/lib/testing/setup/hold-sqlite-writer";
import { chatSpanExport, postExport } from "@/lib/testing/seed/otel-chat";

const sqlite = !process.env.DATABASE_URL;
const spansOf = async (traceId: string) => Number((await rawRows<{ n: number }>("select count(*) as n from otel_spans where trace_id = ?", [traceId]))[0].n);
const conversationsOf = async (service: string) =>
  rawRows<{ name: string }>("select c.name from conversations c join datasets d on d.id = c.dataset_id where d.name = ? order by c.name", [service]);
const inbox = () => inboxDir(databaseFile()!);
const limits = { maxBytes: 1024 * 1024, maxDepth: 128 };

afterEach(async () => {
  delete process.env.OTEL_INBOX_MAX_BYTES;
  resetConfig();
  await stopInboxPass();
  await drainInbox();
});

describe.skipIf(!sqlite)("the trace inbox (SQLite)", () => {
  it("answers exports while another connection holds SQLite's writer, and stores their spans once it lets go", async () => {
    const writer = await holdSqliteWriter(databaseFile()!);
    const sent = ["a", "b", "c"].map((k) => chatSpanExport({ service: "inbox-held", key: `held-${k}`, answer: `answer ${k}` }));
    let answers: Response[];
    try {
      // Before the inbox each of these waited for the writer (up to SQLite's busy timeout of 30 s).
      answers = await Promise.all(sent.map((s) => postExport(s.body)));
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(await Promise.all(sent.map((s) => spansOf(s.traceId)))).toEqual([0, 0, 0]);
      expect(inboxFiles(inbox())).toHaveLength(3);
      expect(await inboxCaughtUp(100)).toBe(false);
    } finally {
      await writer.release();
    }
    expect(await inboxCaughtUp(30_000)).toBe(true);
    expect(await Promise.all(sent.map((s) => spansOf(s.traceId)))).toEqual([1, 1, 1]);
    expect(inboxFiles(inbox())).toEqual([]);
    await flushAssembly();
    expect((await conversationsOf("inbox-held")).map((c) => c.name)).toEqual(["held-a", "held-b", "held-c"]);
  });

  it("an export answered but not stored when the server stopped is stored at the next start; a half-written file is removed", async () => {
    const { body, traceId } = chatSpanExport({ service: "inbox-left", key: "left-1", answer: "kept across a stop" });
    // What the spooling thread writes, left there as a server stopped after answering.
    const spooled = spoolExportOnThread({ body: { bytes: Buffer.from(body), encoding: "json", gzip: false, ...limits }, userId: "local", dir: inbox() });
    expect(spooled).toMatchObject({ spans: 1, rejected: 0 });
    const half = path.join(inbox(), "000000000000001-1-1-000000001.otlp.tmp");
    fs.writeFileSync(half, "{");
    fs.utimesSync(half, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    expect(await spansOf(traceId)).toBe(0);

    storeWaitingExports((await threadStore())!);
    await flushAssembly();
    expect(await spansOf(traceId)).toBe(1);
    expect((await conversationsOf("inbox-left")).map((c) => c.name)).toEqual(["left-1"]);
    expect(fs.readdirSync(inbox()).filter((n) => n !== "failed")).toEqual([]);
  });

  it("once started, the inbox's periodic pass stores a file no export kicked (one left for a reason of the moment, or put there by another process)", async () => {
    storeWaitingExports((await threadStore())!);
    try {
      const { body, traceId } = chatSpanExport({ service: "inbox-pass", key: "pass-1", answer: "picked up" });
      spoolExportOnThread({ body: { bytes: Buffer.from(body), encoding: "json", gzip: false, ...limits }, userId: "local", dir: inbox() });
      const until = Date.now() + 10_000;
      while ((await spansOf(traceId)) === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(await spansOf(traceId)).toBe(1);
      expect(inboxFiles(inbox())).toEqual([]);
    } finally {
      await stopInboxPass();
    }
  });

  it("a file that cannot be read as an export is moved to failed/ with its bytes, and the files after it are stored", async () => {
    const damaged = spoolExportOnThread({ body: { bytes: Buffer.from(chatSpanExport({ service: "inbox-bad", key: "bad", answer: "x" }).body), encoding: "json", gzip: false, ...limits }, userId: "local", dir: inbox() });
    const file = path.join(inbox(), damaged.file!);
    const header = fs.readFileSync(file).subarray(0, fs.readFileSync(file).indexOf(10) + 1);
    fs.writeFileSync(file, Buffer.concat([header, Buffer.from("{ not an export")]));
    const good = chatSpanExport({ service: "inbox-bad", key: "after", answer: "stored" });
    expect((await postExport(good.body)).status).toBe(200);
    await flushAssembly();
    expect(await spansOf(good.traceId)).toBe(1);
    const aside = path.join(inbox(), "failed", damaged.file!);
    expect(fs.readFileSync(aside).toString("utf8")).toContain("{ not an export");
    expect(inboxFiles(inbox())).toEqual([]);
    fs.rmSync(aside);
  });

  it("with OTEL_INBOX_MAX_BYTES=0, and past the bound, an export is stored before it is answered", async () => {
    for (const max of ["0", "10"]) {
      process.env.OTEL_INBOX_MAX_BYTES = max;
      resetConfig();
      const { body, traceId } = chatSpanExport({ service: "inbox-off", key: `off-${max}`, answer: "stored first" });
      expect((await postExport(body)).status).toBe(200);
      expect(await spansOf(traceId)).toBe(1);
      expect(inboxFiles(inbox())).toEqual([]);
    }
  });

  it("when the inbox cannot be written (here a file where its folder goes; a full disk alike), the export is stored before it is answered", async () => {
    fs.rmSync(inbox(), { recursive: true, force: true });
    fs.writeFileSync(inbox(), "not a folder");
    try {
      const { body, traceId } = chatSpanExport({ service: "inbox-unwritable", key: "unwritable", answer: "stored anyway" });
      const res = await postExport(body);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await spansOf(traceId)).toBe(1);
    } finally {
      fs.rmSync(inbox(), { force: true });
    }
  });

  it("an export with no span to store writes nothing to the inbox, and its rejected spans are still answered", async () => {
    const body = JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: "zz", spanId: "00", name: "bad" }] }] }] });
    const res = await postExport(body);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { partialSuccess?: { rejectedSpans?: number | string } }).partialSuccess?.rejectedSpans).toBeTruthy();
    expect(inboxFiles(inbox())).toEqual([]);
  });
});
