/**
 * The BPF lease records as TypeScript sees them: the layouts of the structs
 * in bpf/lease_abi.h (maps and ring-buffer event) and of the two records
 * the addon takes from JavaScript (bpf_guard.h `lh_bpf_file`, `lh_bpf_rule`),
 * byte offsets and sizes. bpf/lease_abi.test.ts compares every entry with
 * what gcc makes of the C headers and with the BTF of the built objects.
 */
import type { AddressEgressRule } from "../server/trust/egress";

export interface StructLayout {
  readonly size: number;
  readonly fields: Readonly<Record<string, { offset: number; size: number }>>;
}

export const BPF_ABI = {
  lh_lease_value: { size: 16, fields: { flags: { offset: 0, size: 4 }, _pad: { offset: 4, size: 4 }, drops: { offset: 8, size: 8 } } },
  lh_file_key: {
    size: 24,
    fields: { cgid: { offset: 0, size: 8 }, ino: { offset: 8, size: 8 }, dev: { offset: 16, size: 4 }, _pad: { offset: 20, size: 4 } },
  },
  lh_egress_key: {
    size: 32,
    fields: {
      prefixlen: { offset: 0, size: 4 }, port_be: { offset: 4, size: 2 }, _pad: { offset: 6, size: 2 },
      cgid: { offset: 8, size: 8 }, addr: { offset: 16, size: 16 },
    },
  },
  lh_event: {
    size: 64,
    fields: {
      kind: { offset: 0, size: 4 }, pid: { offset: 4, size: 4 }, cgid: { offset: 8, size: 8 }, ino: { offset: 16, size: 8 },
      dev: { offset: 24, size: 4 }, family: { offset: 28, size: 1 }, proto: { offset: 29, size: 1 }, port: { offset: 30, size: 2 },
      addr: { offset: 32, size: 16 }, comm: { offset: 48, size: 16 },
    },
  },
  lh_bpf_rule: {
    size: 20,
    fields: { family: { offset: 0, size: 1 }, prefix: { offset: 1, size: 1 }, port: { offset: 2, size: 2 }, addr: { offset: 4, size: 16 } },
  },
  lh_bpf_file: { size: 16, fields: { dev: { offset: 0, size: 8 }, ino: { offset: 8, size: 8 } } },
} as const satisfies Record<string, StructLayout>;

/** Denial kinds (bpf_guard.h LH_DENY_*, lease_abi.h LH_EV_*). */
export const BPF_DENIAL_KINDS = { 1: "exec", 2: "connect", 3: "sendmsg", 4: "socket", 5: "file" } as const;

/** Exec allow-list records for the addon (st_dev as stat() reports it; the loader converts). */
export function packExecFiles(files: readonly { dev: bigint; ino: bigint }[]): Buffer {
  const L = BPF_ABI.lh_bpf_file;
  const b = Buffer.alloc(L.size * files.length);
  files.forEach((f, i) => {
    b.writeBigUInt64LE(f.dev, i * L.size + L.fields.dev.offset);
    b.writeBigUInt64LE(f.ino, i * L.size + L.fields.ino.offset);
  });
  return b;
}

/** Egress rules for the addon: address in network byte order, port in host (little-endian) order. */
export function packEgressRules(rules: readonly AddressEgressRule[]): Buffer {
  const L = BPF_ABI.lh_bpf_rule;
  const b = Buffer.alloc(L.size * rules.length);
  rules.forEach((r, i) => {
    const at = i * L.size;
    b.writeUInt8(r.family, at + L.fields.family.offset);
    b.writeUInt8(r.prefix, at + L.fields.prefix.offset);
    b.writeUInt16LE(r.port, at + L.fields.port.offset);
    const bytes = r.family === 4 ? 4 : 16;
    for (let k = 0; k < bytes; k++) {
      b.writeUInt8(Number((r.network >> BigInt(8 * (bytes - 1 - k))) & 0xffn), at + L.fields.addr.offset + k);
    }
  });
  return b;
}

/** Canonical text of a denied destination: dotted IPv4, RFC 5952 IPv6 (the WHATWG URL serialiser compresses the same way). */
export function addressText(family: number, addr: Uint8Array): string {
  if (family === 4) return Array.from(addr.subarray(0, 4)).join(".");
  const groups: string[] = [];
  for (let k = 0; k < 16; k += 2) groups.push((((addr[k] ?? 0) << 8) | (addr[k + 1] ?? 0)).toString(16));
  return new URL(`http://[${groups.join(":")}]/`).hostname.slice(1, -1);
}
