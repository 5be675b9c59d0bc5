/** Hostile archives for the tests of issue 48, finding 8 (route tests and the reliability suite alike). */
import { deflateRawSync } from "node:zlib";

/**
 * A ZIP whose `members` central-directory entries all point at one local header and its deflate stream
 * of `inflated` zero bytes, each declaring an uncompressed size of 100 bytes.
 */
export function sharedStreamZip(members: number, inflated: number): Uint8Array {
  const data = deflateRawSync(Buffer.alloc(inflated), { level: 9 });
  const name = Buffer.from("samples/0.json");
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8); // deflate
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(100, 22);
  local.writeUInt16LE(name.length, 26);
  const central: Buffer[] = [];
  for (let i = 0; i < members; i++) {
    const n = Buffer.from(`samples/${i}.json`);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(8, 10);
    entry.writeUInt32LE(data.length, 20);
    entry.writeUInt32LE(100, 24);
    entry.writeUInt16LE(n.length, 28);
    entry.writeUInt32LE(0, 42); // every member: the one local header at offset 0
    central.push(entry, n);
  }
  const cd = Buffer.concat(central);
  const cdOffset = local.length + name.length + data.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members, 8);
  end.writeUInt16LE(members, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(cdOffset, 16);
  return new Uint8Array(Buffer.concat([local, name, data, cd, end]));
}
