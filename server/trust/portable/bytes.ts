/**
 * Byte helpers that replace Buffer in code that must also run in a browser
 * (see ./crypto.ts for why). Where Node's Buffer is present it is used as a
 * fast path for base64; the portable branch gives the same answers, which
 * server/trust/portable/portable.test.ts checks.
 */

interface BufferLike {
  buffer: ArrayBufferLike;
  byteOffset: number;
  byteLength: number;
  toString(encoding: string): string;
}
interface BufferStatic {
  from(data: ArrayBufferLike, offset: number, length: number): BufferLike;
  from(text: string, encoding: string): BufferLike;
}
interface NodeBufferModule {
  isAscii?: (bytes: Uint8Array) => boolean;
}

function nodeBufferModule(): NodeBufferModule | undefined {
  if (forcePortable) return undefined;
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  return typeof proc?.getBuiltinModule === "function" ? (proc.getBuiltinModule("node:buffer") as NodeBufferModule | undefined) : undefined;
}

let forcePortable = false;

function nodeBuffer(): BufferStatic | undefined {
  if (forcePortable) return undefined;
  return (globalThis as { Buffer?: BufferStatic }).Buffer;
}

/** Tests only: behave as in a browser. Returns a function that restores the default. */
export function usePortableBytesForTests(): () => void {
  forcePortable = true;
  return () => {
    forcePortable = false;
  };
}

const utf8Encoder = new TextEncoder();

export function utf8(text: string): Uint8Array {
  return utf8Encoder.encode(text);
}

/** UTF-8 byte length without allocating. */
export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i += 1;
    } else n += 3;
  }
  return n;
}

/**
 * The same bytes as a view whose indexOf is Node's memchr-backed
 * Buffer#indexOf when Buffer exists (the verifier scans hundreds of MiB for
 * newlines); the bytes themselves unchanged everywhere else.
 */
export function scanView(bytes: Uint8Array): Uint8Array {
  const buffer = nodeBuffer();
  return buffer === undefined ? bytes : (buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) as unknown as Uint8Array);
}

export function isAscii(bytes: Uint8Array): boolean {
  const native = nodeBufferModule()?.isAscii;
  if (native !== undefined) return native(bytes);
  for (let i = 0; i < bytes.length; i++) if ((bytes[i] as number) > 0x7f) return false;
  return true;
}

/** Decodes bytes known to be ASCII (each byte one UTF-16 code unit). */
export function asciiText(bytes: Uint8Array): string {
  const buffer = nodeBuffer();
  if (buffer !== undefined) return buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  let out = "";
  for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return out;
}

export function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DECODE = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

export function encodeBase64(bytes: Uint8Array): string {
  const buffer = nodeBuffer();
  if (buffer !== undefined) return buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = (bytes[i] as number) << 16;
    out += `${ALPHABET[n >> 18]!}${ALPHABET[(n >> 12) & 63]!}==`;
  } else if (rest === 2) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8);
    out += `${ALPHABET[n >> 18]!}${ALPHABET[(n >> 12) & 63]!}${ALPHABET[(n >> 6) & 63]!}=`;
  }
  return out;
}

/**
 * Lenient decode (like Node's): the caller re-encodes and compares to get
 * strictness, so this only has to be exact on canonical input and return
 * something different (or undefined) on everything else.
 */
export function decodeBase64Loose(text: string): Uint8Array | undefined {
  const buffer = nodeBuffer();
  if (buffer !== undefined) {
    const b = buffer.from(text, "base64");
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }
  if (text.length % 4 !== 0) return undefined;
  let pad = 0;
  if (text.endsWith("==")) pad = 2;
  else if (text.endsWith("=")) pad = 1;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    let n = 0;
    for (let j = 0; j < 4; j++) {
      const c = text.charCodeAt(i + j);
      let v: number;
      if (c === 61 /* = */ && i + j >= text.length - pad) v = 0;
      else {
        v = c < 128 ? (DECODE[c] as number) : -1;
        if (v < 0) return undefined;
      }
      n = (n << 6) | v;
    }
    if (o < out.length) out[o++] = (n >> 16) & 255;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  return out;
}
