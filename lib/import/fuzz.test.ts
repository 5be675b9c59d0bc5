/**
 * Fuzzing the import endpoints with malformed files: whatever arrives, the answer is a 2xx or one of
 * the documented 4xx statuses in the documented shape, and a refused file leaves no row behind.
 */
import fs from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { countTable } from "@/lib/testing/seed/rows";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as importInto from "@/app/api/datasets/[id]/import/route";

const sampleText = fs.readFileSync(path.join(process.cwd(), "e2e/fixtures/sample-dataset.json"), "utf8");
const sample = JSON.parse(sampleText) as unknown;
const allowed = new Set([200, 201, 400, 413, 415, 422]);

function mulberry32(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(20261121);
const int = (n: number) => Math.floor(rand() * n);
const pick = <T,>(items: readonly T[]): T => items[int(items.length)];

async function counts() {
  return { datasets: await countTable("datasets"), conversations: await countTable("conversations"), messages: await countTable("messages"), steps: await countTable("steps") };
}

const strange: unknown[] = [
  null, true, 0, -1.5, 1e308, "", "x".repeat(1000), [], {}, [[]], { __proto__: "x" }, "bot", "human", ["user"], { role: "user" },
];

/** Every path (as keys) to a node of the value. */
function nodePaths(value: unknown, prefix: Array<string | number> = [], out: Array<Array<string | number>> = []) {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((v, i) => nodePaths(v, [...prefix, i], out));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) nodePaths(v, [...prefix, k], out);
  return out;
}

function mutate(value: unknown): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  const paths = nodePaths(copy).filter((p) => p.length > 0);
  for (let n = 0; n < 1 + int(3); n++) {
    const p = pick(paths);
    let parent: Record<string | number, unknown> = copy;
    for (const key of p.slice(0, -1)) {
      const next = parent?.[key];
      if (!next || typeof next !== "object") break;
      parent = next as Record<string | number, unknown>;
    }
    const last = p[p.length - 1];
    if (!parent || typeof parent !== "object") continue;
    const op = int(4);
    if (op === 0) delete parent[last];
    else if (op === 1) parent[last] = pick(strange);
    else if (op === 2) Object.defineProperty(parent, pick(["__proto__", "constructor", "toString", "hasOwnProperty"]), { value: pick(strange), enumerable: true, configurable: true, writable: true });
    else parent[last] = JSON.parse(JSON.stringify(parent[last] ?? null));
  }
  return copy;
}

function corruptText(text: string): string {
  const op = int(4);
  const at = int(text.length);
  if (op === 0) return text.slice(0, at);
  if (op === 1) return text.slice(0, at) + pick(["{", "}", "[", "]", ",", ":", '"', "\\", "\u0001", "'", "/*", "\n", "NaN", "\ud800"]) + text.slice(at);
  if (op === 2) return text.slice(0, at) + text.slice(at + 1 + int(20));
  return text.slice(at) + text.slice(0, at);
}

async function expectSafe(file: string | Uint8Array, target: "create" | number, getFeedback = pick(["true", "false"])) {
  const before = await counts();
  const res =
    target === "create"
      ? await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "fuzz", get_feedback: getFeedback } })
      : await upload(importInto.POST, `/api/datasets/${target}/import`, { file, fields: { get_feedback: getFeedback }, params: { id: target } });
  expect(allowed.has(res.status), `status ${res.status}: ${res.text.slice(0, 300)}`).toBe(true);
  expect(res.json).toBeTypeOf("object");
  const after = await counts();
  if (res.json.success) {
    expect(after.conversations - before.conversations).toBe(res.json.conversations_imported);
    expect(after.messages - before.messages).toBe(res.json.messages_imported);
    expect(after.steps - before.steps).toBe(res.json.steps_imported);
  } else {
    expect(after).toEqual(before);
    expect(res.json.errors.length).toBeGreaterThan(0);
    for (const e of res.json.errors) {
      expect(typeof e.path).toBe("string");
      expect(typeof e.message).toBe("string");
      expect(typeof e.suggestion).toBe("string");
    }
    expect(res.json.llm_feedback === undefined).toBe(getFeedback === "false");
  }
  // A response never echoes a huge value from the file in full.
  expect(res.text.length).toBeLessThan(200_000);
  return res;
}

let datasetId: number;
beforeAll(async () => {
  const res = await upload(createAndImport.POST, "/api/datasets/import", { file: sampleText, fields: { name: "fuzz target" } });
  datasetId = res.json.dataset_id;
});

describe("fuzzing the import endpoints", () => {
  it("survives 150 structural mutations of the sample (deleted keys, swapped types, prototype keys)", async () => {
    for (let i = 0; i < 150; i++) await expectSafe(JSON.stringify(mutate(sample)), i % 2 ? "create" : datasetId);
  });

  it("survives 150 textual corruptions of the sample (truncations, stray characters, cut ranges)", async () => {
    for (let i = 0; i < 150; i++) await expectSafe(corruptText(sampleText), i % 2 ? "create" : datasetId);
  });

  it("survives 60 random byte strings", async () => {
    for (let i = 0; i < 60; i++) {
      const bytes = Uint8Array.from({ length: 1 + int(400) }, () => int(256));
      await expectSafe(bytes, i % 2 ? "create" : datasetId);
    }
  });

  it.each([
    ["an empty file", "", 400],
    ["only whitespace", " \n\t ", 400],
    ["a BOM only", Uint8Array.from([0xef, 0xbb, 0xbf]), 400],
    ["gzip bytes", gzipSync(sampleText), 415],
    ["invalid UTF-8", Uint8Array.from([0x7b, 0xc3, 0x28, 0x7d]), 415],
    ["a lone surrogate encoded (CESU-8)", Uint8Array.from([0x22, 0xed, 0xa0, 0x80, 0x22]), 415],
    ["NUL bytes", "{\u0000}", 415],
    ["null", "null", 422],
    ["a number", "42", 422],
    ["a string", '"conversations"', 422],
    ["an empty array", "[]", 422],
    ["deep arrays", "[".repeat(100_000) + "]".repeat(100_000), 422],
    ["deep objects", '{"a":'.repeat(50_000) + "1" + "}".repeat(50_000), 422],
    ["unclosed deep nesting", "[".repeat(100_000), 422],
    ["a huge string", JSON.stringify({ conversations: [{ messages: [{ role: "x".repeat(2_000_000) }] }] }), 422],
    ["__proto__ everywhere", '{"__proto__": {"conversations": []}, "conversations": [{"__proto__": {"messages": []}, "messages": [{"__proto__": {"role": "user"}, "constructor": {"role": "user"}}]}]}', 422],
    ["prototype names as roles", '{"conversations": [{"messages": [{"role": "constructor"}, {"role": "__proto__"}, {"role": "toString"}]}]}', 422],
    ["JSON Lines with a broken line", '{"messages": []}\n{"messages": [\n', 400],
    ["a BOM before the sample", Uint8Array.from([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(sampleText)]), 201],
  ])("answers %s with the documented status", async (_name, file, status) => {
    const res = await expectSafe(file, "create", "true");
    expect(res.status).toBe(status);
  });
});
