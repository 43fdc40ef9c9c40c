// Tiny ELF shared objects for fixtures, built byte by byte: a header and
// PT_LOAD program headers with a chosen p_align, followed by a payload. No
// code, never executed — they only need to look like libraries to a reader
// of program headers, which is all the worker is.

export const EM_AARCH64 = 183;
export const EM_X86_64 = 62;

export function buildElf64(opts: { machine: number; loadAlign: number; payload?: Buffer }): Buffer {
  const ehsize = 64;
  const phentsize = 56;
  const phnum = 2;
  const header = Buffer.alloc(ehsize + phentsize * phnum);
  header.writeUInt32BE(0x7f454c46, 0);
  header[4] = 2; // ELFCLASS64
  header[5] = 1; // little-endian
  header[6] = 1; // EV_CURRENT
  header.writeUInt16LE(3, 16); // ET_DYN
  header.writeUInt16LE(opts.machine, 18);
  header.writeUInt32LE(1, 20);
  header.writeBigUInt64LE(BigInt(ehsize), 32); // e_phoff
  header.writeUInt16LE(ehsize, 52);
  header.writeUInt16LE(phentsize, 54);
  header.writeUInt16LE(phnum, 56);
  const payload = opts.payload ?? Buffer.from("leasehold test library\n");
  const total = header.length + payload.length;
  for (let i = 0; i < phnum; i++) {
    const h = ehsize + i * phentsize;
    header.writeUInt32LE(1, h); // PT_LOAD
    header.writeUInt32LE(i === 0 ? 5 : 6, h + 4); // R+X, then R+W
    const vaddr = BigInt(i * opts.loadAlign);
    header.writeBigUInt64LE(0n, h + 8);
    header.writeBigUInt64LE(vaddr, h + 16);
    header.writeBigUInt64LE(vaddr, h + 24);
    header.writeBigUInt64LE(BigInt(total), h + 32);
    header.writeBigUInt64LE(BigInt(total), h + 40);
    header.writeBigUInt64LE(BigInt(opts.loadAlign), h + 48);
  }
  return Buffer.concat([header, payload]);
}
