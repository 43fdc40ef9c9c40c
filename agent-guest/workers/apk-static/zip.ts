// ZIP reader for APKs, over positional reads. It trusts no length field:
// the end-of-central-directory search is bounded by the format's own maximum
// comment, the central directory by a size and entry cap, and every inflate
// by the entry's declared size, a per-entry cap, a compression-ratio guard
// and one budget for the whole run (so overlapping-entry bombs, which make a
// small file expand many times over, stop at the budget).
//
// Entry names are data: they are kept as strings for facts and lookups and
// never joined to a filesystem path. Names that would escape a directory
// (absolute, `..`, backslash, drive letters, NUL) are listed for the report.

import { constants as zc, crc32, inflateRawSync } from "node:zlib";
import type { Limitations } from "./facts";
import type { InspectLimits } from "./limits";
import { refuse } from "./refusal";
import type { ByteSource } from "./source";

const SIG_EOCD = 0x06054b50;
const SIG_EOCD64 = 0x06064b50;
const SIG_EOCD64_LOCATOR = 0x07064b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_LOCAL = 0x04034b50;
const EOCD_SIZE = 22;
const MAX_COMMENT = 0xffff;
const CENTRAL_SIZE = 46;
const LOCAL_SIZE = 30;

export const METHOD_STORED = 0;
export const METHOD_DEFLATE = 8;

export interface ZipEntry {
  index: number;
  name: string;
  /** The name as stored was longer than the cap and was cut for reporting. */
  nameTruncated: boolean;
  flags: number;
  method: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
}

export interface ZipArchive {
  source: ByteSource;
  entries: ZipEntry[];
  /** First entry of each name (later duplicates are listed in `duplicateNames`). */
  byName: Map<string, ZipEntry>;
  duplicateNames: string[];
  unsafeNames: string[];
  centralDirectoryOffset: number;
  centralDirectorySize: number;
  eocdOffset: number;
  zip64: boolean;
  comment: string;
}

/** Why a name must never be used as a path — or null when it is a plain relative name. */
export function unsafeNameReason(name: string): string | null {
  if (name.includes("\0")) return "NUL byte";
  if (name.startsWith("/")) return "absolute path";
  if (name.includes("\\")) return "backslash";
  if (/^[A-Za-z]:/.test(name)) return "drive letter";
  if (name.split("/").some((seg) => seg === "..")) return "parent-directory segment";
  return null;
}

const utf8 = new TextDecoder("utf-8", { fatal: false });

function u64(buf: Buffer, at: number): number {
  const v = buf.readBigUInt64LE(at);
  // Offsets above 2^53 cannot address a real file; treat them as corrupt.
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) return Number.MAX_SAFE_INTEGER;
  return Number(v);
}

interface Eocd {
  offset: number;
  entries: number;
  cdSize: number;
  cdOffset: number;
  comment: string;
  zip64: boolean;
}

function findEocd(src: ByteSource, lim: Limitations): Eocd {
  if (src.size < EOCD_SIZE) throw refuse("not a ZIP archive: shorter than an end-of-central-directory record");
  const tailLen = Math.min(src.size, EOCD_SIZE + MAX_COMMENT);
  const tailStart = src.size - tailLen;
  const tail = src.read(tailStart, tailLen);
  for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
    if (tail.readUInt32LE(i) !== SIG_EOCD) continue;
    const commentLen = tail.readUInt16LE(i + 20);
    if (i + EOCD_SIZE + commentLen > tail.length) continue;
    if (i + EOCD_SIZE + commentLen !== tail.length) lim.add("bytes follow the ZIP end-of-central-directory comment");
    const offset = tailStart + i;
    const disk = tail.readUInt16LE(i + 4);
    const cdDisk = tail.readUInt16LE(i + 6);
    let entries = tail.readUInt16LE(i + 10);
    let cdSize = tail.readUInt32LE(i + 12);
    let cdOffset = tail.readUInt32LE(i + 16);
    const comment = utf8.decode(tail.subarray(i + EOCD_SIZE, i + EOCD_SIZE + Math.min(commentLen, 256)));
    let zip64 = false;
    if (entries === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
      const loc = src.read(offset - 20, 20);
      if (loc.length === 20 && loc.readUInt32LE(0) === SIG_EOCD64_LOCATOR) {
        const at = u64(loc, 8);
        const rec = src.read(at, 56);
        if (rec.length !== 56 || rec.readUInt32LE(0) !== SIG_EOCD64) throw refuse("ZIP64 end-of-central-directory record missing or truncated");
        entries = u64(rec, 32);
        cdSize = u64(rec, 40);
        cdOffset = u64(rec, 48);
        zip64 = true;
      }
    } else if (disk !== 0 || cdDisk !== 0) {
      throw refuse("multi-disk ZIP archives are not APKs");
    }
    return { offset, entries, cdSize, cdOffset, comment, zip64 };
  }
  throw refuse("not a ZIP archive: no end-of-central-directory record in the last 64 KiB");
}

export function openZip(src: ByteSource, limits: InspectLimits, lim: Limitations): ZipArchive {
  const eocd = findEocd(src, lim);
  if (eocd.entries > limits.maxEntries) throw refuse(`ZIP declares ${eocd.entries} entries; the limit is ${limits.maxEntries}`);
  if (eocd.cdSize > limits.maxCentralDirectoryBytes) throw refuse(`ZIP central directory is ${eocd.cdSize} bytes; the limit is ${limits.maxCentralDirectoryBytes}`);
  if (eocd.cdOffset + eocd.cdSize > eocd.offset) throw refuse("ZIP central directory extends past the end-of-central-directory record (truncated or corrupt)");
  if (!eocd.zip64 && eocd.cdOffset + eocd.cdSize !== eocd.offset) lim.add("bytes lie between the central directory and its end record (an APK signature would not verify)");
  const cd = src.read(eocd.cdOffset, eocd.cdSize);
  if (cd.length !== eocd.cdSize) throw refuse("ZIP central directory is truncated");

  const entries: ZipEntry[] = [];
  const byName = new Map<string, ZipEntry>();
  const duplicateNames: string[] = [];
  const unsafeNames: string[] = [];
  let p = 0;
  for (let i = 0; i < eocd.entries; i++) {
    if (p + CENTRAL_SIZE > cd.length || cd.readUInt32LE(p) !== SIG_CENTRAL) {
      lim.add(`central directory ends after ${i} of ${eocd.entries} declared entries`);
      break;
    }
    const nameLen = cd.readUInt16LE(p + 28);
    const extraLen = cd.readUInt16LE(p + 30);
    const commentLen = cd.readUInt16LE(p + 32);
    const end = p + CENTRAL_SIZE + nameLen + extraLen + commentLen;
    if (end > cd.length) {
      lim.add(`central directory entry ${i} runs past the directory`);
      break;
    }
    const nameBytes = cd.subarray(p + CENTRAL_SIZE, p + CENTRAL_SIZE + Math.min(nameLen, limits.maxNameBytes));
    const entry: ZipEntry = {
      index: i,
      name: utf8.decode(nameBytes),
      nameTruncated: nameLen > limits.maxNameBytes,
      flags: cd.readUInt16LE(p + 8),
      method: cd.readUInt16LE(p + 10),
      crc32: cd.readUInt32LE(p + 16),
      compressedSize: cd.readUInt32LE(p + 20),
      uncompressedSize: cd.readUInt32LE(p + 24),
      localHeaderOffset: cd.readUInt32LE(p + 42),
    };
    applyZip64Extra(entry, cd.subarray(p + CENTRAL_SIZE + nameLen, p + CENTRAL_SIZE + nameLen + extraLen));
    p = end;
    entries.push(entry);
    if (entry.nameTruncated) lim.add(`entry ${i} has a ${nameLen}-byte name; only the first ${limits.maxNameBytes} bytes are reported`);
    const why = unsafeNameReason(entry.name);
    if (why !== null && unsafeNames.length < 100) unsafeNames.push(entry.name);
    if (byName.has(entry.name)) {
      if (duplicateNames.length < 100) duplicateNames.push(entry.name);
    } else {
      byName.set(entry.name, entry);
    }
  }
  checkOverlaps(entries, eocd.cdOffset, lim);
  return {
    source: src,
    entries,
    byName,
    duplicateNames,
    unsafeNames,
    centralDirectoryOffset: eocd.cdOffset,
    centralDirectorySize: eocd.cdSize,
    eocdOffset: eocd.offset,
    zip64: eocd.zip64,
    comment: eocd.comment,
  };
}

function applyZip64Extra(entry: ZipEntry, extra: Buffer): void {
  let q = 0;
  while (q + 4 <= extra.length) {
    const id = extra.readUInt16LE(q);
    const size = extra.readUInt16LE(q + 2);
    const body = extra.subarray(q + 4, Math.min(extra.length, q + 4 + size));
    if (id === 0x0001) {
      // Only the fields saturated in the fixed header are present, in this order.
      let r = 0;
      const next = (): number | null => {
        if (r + 8 > body.length) return null;
        const v = u64(body, r);
        r += 8;
        return v;
      };
      if (entry.uncompressedSize === 0xffffffff) entry.uncompressedSize = next() ?? entry.uncompressedSize;
      if (entry.compressedSize === 0xffffffff) entry.compressedSize = next() ?? entry.compressedSize;
      if (entry.localHeaderOffset === 0xffffffff) entry.localHeaderOffset = next() ?? entry.localHeaderOffset;
      return;
    }
    q += 4 + size;
  }
}

/** Overlapping entries are how a small file claims gigabytes; say so. */
function checkOverlaps(entries: ZipEntry[], cdOffset: number, lim: Limitations): void {
  const sorted = [...entries].sort((a, b) => a.localHeaderOffset - b.localHeaderOffset);
  let overlaps = 0;
  for (let i = 0; i < sorted.length; i++) {
    const e = sorted[i]!;
    const minEnd = e.localHeaderOffset + LOCAL_SIZE + e.compressedSize;
    const next = i + 1 < sorted.length ? sorted[i + 1]!.localHeaderOffset : cdOffset;
    if (minEnd > next) overlaps++;
  }
  if (overlaps > 0) lim.add(`${overlaps} ZIP entries overlap another entry or the central directory (a zip-bomb construction)`);
}

/** Bytes inflated or read over the whole run; a zip bomb stops here. */
export class ReadBudget {
  constructor(public remaining: number) {}

  /** Charges n bytes; once a charge fails the budget is spent, so no later read starts work it cannot finish. */
  take(n: number): boolean {
    if (n > this.remaining) {
      this.remaining = 0;
      return false;
    }
    this.remaining -= n;
    return true;
  }
}

/**
 * Offset of an entry's data, from its local header; null (with a limitation)
 * when unusable. The local name must equal the central one, as Android's
 * libziparchive demands: archives that show one name to a scanner and
 * another to the installer are a known evasion.
 */
export function entryDataOffset(zip: ZipArchive, e: ZipEntry, lim: Limitations): number | null {
  const nameCap = e.nameTruncated ? 0 : Buffer.byteLength(e.name, "utf8");
  const hdr = zip.source.read(e.localHeaderOffset, LOCAL_SIZE + nameCap);
  if (hdr.length < LOCAL_SIZE || hdr.readUInt32LE(0) !== SIG_LOCAL) {
    lim.add(`entry ${JSON.stringify(e.name)}: no local header at offset ${e.localHeaderOffset}`);
    return null;
  }
  const nameLen = hdr.readUInt16LE(26);
  if (!e.nameTruncated && (nameLen !== nameCap || utf8.decode(hdr.subarray(LOCAL_SIZE, LOCAL_SIZE + nameLen)) !== e.name)) {
    lim.add(`entry ${JSON.stringify(e.name)}: the local header names a different file; not read`);
    return null;
  }
  const at = e.localHeaderOffset + LOCAL_SIZE + nameLen + hdr.readUInt16LE(28);
  if (at + e.compressedSize > zip.centralDirectoryOffset) {
    lim.add(`entry ${JSON.stringify(e.name)}: data runs into the central directory (truncated or corrupt)`);
    return null;
  }
  return at;
}

function usable(e: ZipEntry, lim: Limitations): boolean {
  if ((e.flags & 1) !== 0) {
    lim.add(`entry ${JSON.stringify(e.name)} is encrypted; not read`);
    return false;
  }
  if (e.method !== METHOD_STORED && e.method !== METHOD_DEFLATE) {
    lim.add(`entry ${JSON.stringify(e.name)} uses compression method ${e.method}; not read`);
    return false;
  }
  return true;
}

/**
 * The whole content of an entry, or null with a limitation. Refuses entries
 * above the per-entry cap, above the ratio guard, above the run's budget, and
 * entries whose inflated size or CRC differ from what the directory declares.
 */
export function readEntry(zip: ZipArchive, e: ZipEntry, limits: InspectLimits, budget: ReadBudget, lim: Limitations): Buffer | null {
  const label = JSON.stringify(e.name);
  if (!usable(e, lim)) return null;
  if (e.uncompressedSize > limits.maxEntryBytes || e.compressedSize > limits.maxEntryBytes) {
    lim.add(`entry ${label} is ${e.uncompressedSize} bytes; entries above ${limits.maxEntryBytes} are not read whole`);
    return null;
  }
  if (e.method === METHOD_DEFLATE && e.uncompressedSize > 1024 * 1024 && e.uncompressedSize / Math.max(1, e.compressedSize) > limits.maxCompressionRatio) {
    lim.add(`entry ${label} declares a compression ratio above ${limits.maxCompressionRatio}:1; not inflated (zip-bomb guard)`);
    return null;
  }
  if (!budget.take(e.uncompressedSize)) {
    lim.add(`read budget exhausted at entry ${label} (limit ${limits.maxTotalInflatedBytes} bytes for the run)`);
    return null;
  }
  const at = entryDataOffset(zip, e, lim);
  if (at === null) return null;
  const raw = zip.source.read(at, e.compressedSize);
  if (raw.length !== e.compressedSize) {
    lim.add(`entry ${label} is truncated`);
    return null;
  }
  let data: Buffer;
  if (e.method === METHOD_STORED) {
    if (e.compressedSize !== e.uncompressedSize) {
      lim.add(`entry ${label} is stored but declares different compressed and uncompressed sizes`);
      return null;
    }
    data = raw;
  } else {
    try {
      // One byte over the declared size is enough to prove the declaration false.
      data = inflateRawSync(raw, { maxOutputLength: e.uncompressedSize + 1 });
    } catch {
      lim.add(`entry ${label} does not inflate to its declared ${e.uncompressedSize} bytes (corrupt or a bomb)`);
      return null;
    }
    if (data.length !== e.uncompressedSize) {
      lim.add(`entry ${label} inflates to ${data.length} bytes, not the declared ${e.uncompressedSize}`);
      return null;
    }
  }
  if (crc32(data) !== e.crc32) {
    lim.add(`entry ${label} fails its CRC-32 check`);
    return null;
  }
  return data;
}

/**
 * The first `n` bytes of an entry (an ELF header, a file magic) without
 * inflating the rest. Deflate input is fed in growing slices with a sync
 * flush so a truncated stream yields what it has. Every attempt's output is
 * capped and charged to the run's budget — the work done, not just the bytes
 * kept — so thousands of entries sharing one bomb stop at the budget.
 */
export function readEntryPrefix(zip: ZipArchive, e: ZipEntry, n: number, budget: ReadBudget, lim: Limitations): Buffer | null {
  if (!usable(e, lim)) return null;
  if (budget.remaining <= 0) return budgetGone(lim);
  const at = entryDataOffset(zip, e, lim);
  if (at === null) return null;
  if (e.method === METHOD_STORED) {
    const out = zip.source.read(at, Math.min(n, e.compressedSize));
    return budget.take(out.length) ? out : budgetGone(lim);
  }
  // Deflate expands at most ~1032:1, so 1 KiB of input stays under the cap.
  const attemptCap = 2 * 1024 * 1024;
  let k = Math.min(e.compressedSize, 1024);
  for (;;) {
    const slice = zip.source.read(at, k);
    let out: Buffer;
    try {
      out = inflateRawSync(slice, { finishFlush: zc.Z_SYNC_FLUSH, maxOutputLength: attemptCap });
    } catch {
      budget.take(Math.min(budget.remaining, attemptCap));
      lim.add(`entry ${JSON.stringify(e.name)}: its first ${k} compressed bytes inflate beyond ${attemptCap} bytes or are corrupt`);
      return null;
    }
    if (!budget.take(out.length)) return budgetGone(lim);
    if (out.length >= n || k >= e.compressedSize) return Buffer.from(out.subarray(0, Math.min(n, out.length)));
    k = Math.min(e.compressedSize, k * 4);
  }
}

function budgetGone(lim: Limitations): null {
  lim.add("read budget exhausted; later entries are not examined");
  return null;
}
