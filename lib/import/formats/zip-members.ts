/**
 * Reading members of a ZIP archive within a budget of bytes actually inflated. A member's declared size
 * (the central directory's "uncompressed size") is what the archive says, not what it holds: an upload
 * of 1.04 MB whose 20 members point at one shared deflate stream declared a few bytes each and inflated
 * 20 GB (fflate's unzipSync decodes a member's whole stream whatever it declared; 46 s on the request
 * loop). Here the central directory is read for names and offsets only, and each wanted member is
 * inflated through fflate's streaming Inflate a slice at a time, counting what comes out: past the
 * budget, in total over every member, reading stops. A gzip file is read the same way (gunzipWithin).
 */
import { Gunzip, Inflate } from "fflate";

export type ZipMembers =
  | { ok: true; members: Map<string, Uint8Array> }
  | { ok: false; reason: "too_large" }
  | { ok: false; reason: "unreadable"; detail: string };

/** Compressed bytes pushed at a time: deflate expands at most ~1,032×, so one push yields at most ~16 MB. */
const SLICE = 16 * 1024;

class Unreadable extends Error {}

function u16(b: Uint8Array, at: number): number {
  if (at + 2 > b.length) throw new Unreadable("truncated");
  return b[at] | (b[at + 1] << 8);
}
function u32(b: Uint8Array, at: number): number {
  if (at + 4 > b.length) throw new Unreadable("truncated");
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16)) + b[at + 3] * 0x1000000;
}
function u64(b: Uint8Array, at: number): number {
  const value = u32(b, at) + u32(b, at + 4) * 0x100000000;
  if (!Number.isSafeInteger(value)) throw new Unreadable("a ZIP64 field is out of range");
  return value;
}

type Entry = { name: string; method: number; flags: number; compressedSize: number; localOffset: number };

/** The central directory's entries (ZIP64 included). */
function centralDirectory(b: Uint8Array): Entry[] {
  // The end-of-central-directory record: 22 bytes and a comment of up to 65,535, from the end.
  let eocd = -1;
  for (let i = b.length - 22; i >= Math.max(0, b.length - 22 - 65_535); i--) {
    if (b[i] === 0x50 && b[i + 1] === 0x4b && b[i + 2] === 0x05 && b[i + 3] === 0x06) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Unreadable("no end of central directory");
  let count = u16(b, eocd + 10);
  let offset = u32(b, eocd + 16);
  if (count === 0xffff || offset === 0xffffffff) {
    const locator = eocd - 20;
    if (locator < 0 || u32(b, locator) !== 0x07064b50) throw new Unreadable("no ZIP64 locator");
    const record = u64(b, locator + 8);
    if (u32(b, record) !== 0x06064b50) throw new Unreadable("no ZIP64 end of central directory");
    count = u64(b, record + 32);
    offset = u64(b, record + 48);
  }
  const entries: Entry[] = [];
  const decoder = new TextDecoder();
  let at = offset;
  for (let n = 0; n < count; n++) {
    if (u32(b, at) !== 0x02014b50) throw new Unreadable("a damaged central directory");
    const flags = u16(b, at + 8);
    const method = u16(b, at + 10);
    let compressedSize = u32(b, at + 20);
    const uncompressed32 = u32(b, at + 24);
    const nameLength = u16(b, at + 28);
    const extraLength = u16(b, at + 30);
    const commentLength = u16(b, at + 32);
    let localOffset = u32(b, at + 42);
    if (at + 46 + nameLength > b.length) throw new Unreadable("truncated");
    const name = decoder.decode(b.subarray(at + 46, at + 46 + nameLength));
    if (compressedSize === 0xffffffff || localOffset === 0xffffffff) {
      // The ZIP64 extra field holds, in order, the sizes and offset whose 32-bit fields are all ones.
      let x = at + 46 + nameLength;
      const end = x + extraLength;
      while (x + 4 <= end) {
        const id = u16(b, x);
        const size = u16(b, x + 2);
        if (id === 0x0001) {
          let y = x + 4;
          if (uncompressed32 === 0xffffffff) y += 8;
          if (compressedSize === 0xffffffff) {
            compressedSize = u64(b, y);
            y += 8;
          }
          if (localOffset === 0xffffffff) localOffset = u64(b, y);
          break;
        }
        x += 4 + size;
      }
    }
    entries.push({ name, method, flags, compressedSize, localOffset });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/**
 * The wanted members' bytes, or `too_large` once the bytes inflated (all members together) pass
 * `maxBytes`, or `unreadable` for an archive that is damaged, encrypted or uses another compression.
 */
export function readZipMembers(bytes: Uint8Array, wanted: (name: string) => boolean, maxBytes: number): ZipMembers {
  let total = 0;
  const members = new Map<string, Uint8Array>();
  try {
    for (const entry of centralDirectory(bytes)) {
      if (!wanted(entry.name) || entry.name.endsWith("/")) continue;
      if (entry.flags & 1) throw new Unreadable("an encrypted member");
      const local = entry.localOffset;
      if (u32(bytes, local) !== 0x04034b50) throw new Unreadable("a damaged local header");
      const start = local + 30 + u16(bytes, local + 26) + u16(bytes, local + 28);
      const end = start + entry.compressedSize;
      if (end > bytes.length) throw new Unreadable("a member runs past the end of the archive");
      const data = bytes.subarray(start, end);
      if (entry.method === 0) {
        total += data.length;
        if (total > maxBytes) return { ok: false, reason: "too_large" };
        members.set(entry.name, data.slice());
        continue;
      }
      if (entry.method !== 8) throw new Unreadable(`compression method ${entry.method}`);
      const chunks: Uint8Array[] = [];
      let over = false;
      let ended = false;
      const inflate = new Inflate((chunk, final) => {
        total += chunk.length;
        if (total > maxBytes) over = true;
        else chunks.push(chunk);
        if (final) ended = true;
      });
      for (let i = 0; i < data.length && !over && !ended; i += SLICE) {
        inflate.push(data.subarray(i, Math.min(data.length, i + SLICE)), i + SLICE >= data.length);
      }
      if (over) return { ok: false, reason: "too_large" };
      if (data.length === 0) inflate.push(new Uint8Array(0), true);
      const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
      let o = 0;
      for (const c of chunks) out.set(c, (o += c.length) - c.length);
      members.set(entry.name, out);
    }
  } catch (error) {
    return { ok: false, reason: "unreadable", detail: error instanceof Error ? error.message : String(error) };
  }
  return { ok: true, members };
}

/**
 * A gzip file's content within `maxBytes` actually inflated (fflate's gunzipSync inflates it all first:
 * 50 MB of gzip is 50 GB of zeros), or why not.
 */
export function gunzipWithin(bytes: Uint8Array, maxBytes: number): { ok: true; bytes: Uint8Array } | { ok: false; reason: "too_large" } | { ok: false; reason: "unreadable"; detail: string } {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let over = false;
  let ended = false;
  try {
    const gunzip = new Gunzip((chunk, final) => {
      total += chunk.length;
      if (total > maxBytes) over = true;
      else chunks.push(chunk);
      if (final) ended = true;
    });
    for (let i = 0; i < bytes.length && !over && !ended; i += SLICE) gunzip.push(bytes.subarray(i, Math.min(bytes.length, i + SLICE)), i + SLICE >= bytes.length);
  } catch (error) {
    return { ok: false, reason: "unreadable", detail: error instanceof Error ? error.message : String(error) };
  }
  if (over) return { ok: false, reason: "too_large" };
  const out = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) out.set(c, (o += c.length) - c.length);
  return { ok: true, bytes: out };
}
