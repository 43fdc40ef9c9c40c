// A small ZIP writer for hand-made (and deliberately broken) archives. Every
// field a hostile archive could lie about can be overridden per entry.

import { crc32, deflateRawSync } from "node:zlib";

export interface WriteEntry {
  name: string;
  data: Buffer | string;
  method?: 0 | 8;
  /** Overrides: what the central directory claims, whatever the data is. */
  declaredSize?: number;
  crc?: number;
  flags?: number;
  methodField?: number;
  /** Already deflated bytes with their true size and CRC (skips compressing the same data again). */
  precompressed?: { body: Buffer; size: number; crc: number };
  /** Emit no local record; the central entry points at entry `sharesDataOf`'s local header. */
  sharesDataOf?: number;
}

export interface WriteOptions {
  /** Write ZIP64 end records (and saturate the classic ones), as tools do past 65535 entries. */
  zip64?: boolean;
  comment?: string;
}

export function writeZip(entries: WriteEntry[], opts: WriteOptions = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  const offsets: number[] = [];
  const bodyLengths: number[] = [];
  const crcs: number[] = [];
  let offset = 0;
  entries.forEach((e) => {
    const name = Buffer.from(e.name, "utf8");
    const raw = Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data, "utf8");
    const method = e.method ?? 8;
    // A shared entry has no body of its own; compressing it again would be wasted work.
    const body = e.precompressed?.body ?? (e.sharesDataOf !== undefined ? Buffer.alloc(0) : method === 8 ? deflateRawSync(raw) : raw);
    const crc = e.crc ?? e.precompressed?.crc ?? (e.sharesDataOf !== undefined ? crcs[e.sharesDataOf]! : crc32(raw));
    crcs.push(crc);
    const size = e.declaredSize ?? e.precompressed?.size ?? raw.length;
    const methodField = e.methodField ?? method;
    let localOffset = offset;
    if (e.sharesDataOf === undefined) {
      const lh = Buffer.alloc(30);
      lh.writeUInt32LE(0x04034b50, 0);
      lh.writeUInt16LE(20, 4);
      lh.writeUInt16LE(e.flags ?? 0x800, 6);
      lh.writeUInt16LE(methodField, 8);
      lh.writeUInt32LE(crc, 14);
      lh.writeUInt32LE(body.length, 18);
      lh.writeUInt32LE(size, 22);
      lh.writeUInt16LE(name.length, 26);
      locals.push(lh, name, body);
      offset += 30 + name.length + body.length;
    } else {
      localOffset = offsets[e.sharesDataOf]!;
    }
    offsets.push(localOffset);
    const compressedLength = e.sharesDataOf === undefined ? body.length : bodyLengths[e.sharesDataOf]!;
    bodyLengths.push(compressedLength);
    const extra = opts.zip64 ? Buffer.alloc(12) : Buffer.alloc(0);
    if (opts.zip64) {
      extra.writeUInt16LE(0x0001, 0);
      extra.writeUInt16LE(8, 2);
      extra.writeBigUInt64LE(BigInt(localOffset), 4);
    }
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0);
    ch.writeUInt16LE(20, 4);
    ch.writeUInt16LE(20, 6);
    ch.writeUInt16LE(e.flags ?? 0x800, 8);
    ch.writeUInt16LE(methodField, 10);
    ch.writeUInt32LE(crc, 16);
    ch.writeUInt32LE(compressedLength, 20);
    ch.writeUInt32LE(size, 24);
    ch.writeUInt16LE(name.length, 28);
    ch.writeUInt16LE(extra.length, 30);
    ch.writeUInt32LE(opts.zip64 ? 0xffffffff : localOffset, 42);
    centrals.push(ch, name, extra);
  });
  const cd = Buffer.concat(centrals);
  const cdOffset = offset;
  const comment = Buffer.from(opts.comment ?? "", "utf8");
  const tail: Buffer[] = [];
  if (opts.zip64) {
    const e64 = Buffer.alloc(56);
    e64.writeUInt32LE(0x06064b50, 0);
    e64.writeBigUInt64LE(44n, 4);
    e64.writeUInt16LE(45, 12);
    e64.writeUInt16LE(45, 14);
    e64.writeBigUInt64LE(BigInt(entries.length), 24);
    e64.writeBigUInt64LE(BigInt(entries.length), 32);
    e64.writeBigUInt64LE(BigInt(cd.length), 40);
    e64.writeBigUInt64LE(BigInt(cdOffset), 48);
    const loc = Buffer.alloc(20);
    loc.writeUInt32LE(0x07064b50, 0);
    loc.writeBigUInt64LE(BigInt(cdOffset + cd.length), 8);
    loc.writeUInt32LE(1, 16);
    tail.push(e64, loc);
  }
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(opts.zip64 ? 0xffff : entries.length, 8);
  eocd.writeUInt16LE(opts.zip64 ? 0xffff : entries.length, 10);
  eocd.writeUInt32LE(opts.zip64 ? 0xffffffff : cd.length, 12);
  eocd.writeUInt32LE(opts.zip64 ? 0xffffffff : cdOffset, 16);
  eocd.writeUInt16LE(comment.length, 20);
  return Buffer.concat([...locals, cd, ...tail, eocd, comment]);
}
