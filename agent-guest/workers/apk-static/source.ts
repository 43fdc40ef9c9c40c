import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/**
 * Positional reads over the artifact. The APK is never loaded whole: every
 * read names its offset and a length the caller has already bounded, and a
 * read past the end returns fewer bytes rather than throwing, so truncation
 * is visible to the parser that asked.
 */
export interface ByteSource {
  readonly size: number;
  read(position: number, length: number): Buffer;
  /** Fills `into` from `position` and returns the byte count; lets a full scan reuse one buffer. */
  readInto(position: number, into: Buffer): number;
}

export class FdSource implements ByteSource {
  readonly size: number;

  constructor(private readonly fd: number) {
    this.size = fstatSync(fd).size;
  }

  read(position: number, length: number): Buffer {
    if (position < 0 || length <= 0 || position >= this.size) return Buffer.alloc(0);
    const want = Math.min(length, this.size - position);
    const buf = Buffer.allocUnsafe(want);
    let got = 0;
    while (got < want) {
      const n = readSync(this.fd, buf, got, want - got, position + got);
      if (n === 0) break;
      got += n;
    }
    return got === want ? buf : buf.subarray(0, got);
  }

  readInto(position: number, into: Buffer): number {
    let got = 0;
    while (got < into.length && position + got < this.size) {
      const n = readSync(this.fd, into, got, into.length - got, position + got);
      if (n === 0) break;
      got += n;
    }
    return got;
  }
}

/** Opens a path read-only for the duration of `use`, closing it after. */
export function withFileSource<T>(path: string, use: (src: ByteSource) => T): T {
  const fd = openSync(path, "r");
  try {
    return use(new FdSource(fd));
  } finally {
    closeSync(fd);
  }
}

/** An in-memory source, for bytes already bounded (tests, nested data). */
export class BufferSource implements ByteSource {
  readonly size: number;

  constructor(private readonly buf: Buffer) {
    this.size = buf.length;
  }

  read(position: number, length: number): Buffer {
    if (position < 0 || length <= 0 || position >= this.size) return Buffer.alloc(0);
    return this.buf.subarray(position, Math.min(this.size, position + length));
  }

  readInto(position: number, into: Buffer): number {
    if (position < 0 || position >= this.size) return 0;
    return this.buf.copy(into, 0, position, Math.min(this.size, position + into.length));
  }
}
