import net from "node:net";

/**
 * Egress entries `<CIDR>:<port>` — `10.0.0.0/8:443` for IPv4,
 * `[2001:db8::]/32:443` for IPv6. Strict: the network address has no host
 * bits set, the prefix length fits the family, the port is 1–65535. One
 * spelling per entry so ceiling files and job policies compare exactly.
 */
export interface EgressEntry {
  family: 4 | 6;
  network: bigint;
  prefix: number;
  port: number;
  text: string;
}

function ipv4ToBigInt(addr: string): bigint {
  return addr.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function ipv6ToBigInt(addr: string): bigint {
  let text = addr;
  // An embedded IPv4 tail (::ffff:10.0.0.1) becomes two hextets.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1]) {
    const n = ipv4ToBigInt(v4[1]);
    text = text.slice(0, -v4[1].length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const h = head === "" ? [] : head.split(":");
  const t = tail === undefined || tail === "" ? [] : tail.split(":");
  const fill = tail === undefined ? 0 : 8 - h.length - t.length;
  const groups = [...h, ...Array<string>(fill).fill("0"), ...t];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** Parses one entry, or returns the reason it is malformed. */
export function parseEgress(text: string): EgressEntry | { error: string } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|(\d{1,3}(?:\.\d{1,3}){3}))\/(\d{1,3}):(\d{1,5})$/.exec(text);
  if (!m) return { error: `'${text}' is not <ipv4>/<len>:<port> or [<ipv6>]/<len>:<port>` };
  const [, v6, v4, lenText = "", portText = ""] = m;
  const prefix = Number(lenText);
  const port = Number(portText);
  if (port < 1 || port > 65535 || String(port) !== portText) return { error: `'${text}': port must be 1-65535 without leading zeros` };
  let family: 4 | 6;
  let network: bigint;
  if (v4 !== undefined) {
    if (!net.isIPv4(v4)) return { error: `'${text}': invalid IPv4 address` };
    family = 4;
    network = ipv4ToBigInt(v4);
  } else {
    if (v6 === undefined || !net.isIPv6(v6)) return { error: `'${text}': invalid IPv6 address` };
    family = 6;
    network = ipv6ToBigInt(v6);
  }
  const bits = family === 4 ? 32 : 128;
  if (prefix > bits || String(prefix) !== lenText) return { error: `'${text}': prefix length must be 0-${bits}` };
  const hostMask = (1n << BigInt(bits - prefix)) - 1n;
  if ((network & hostMask) !== 0n) return { error: `'${text}': host bits are set; write the network address` };
  return { family, network, prefix, port, text };
}

export function isEgressText(text: string): boolean {
  return !("error" in parseEgress(text));
}

/** True when every address:port `inner` allows is also allowed by `outer`. */
export function egressCovers(outer: EgressEntry, inner: EgressEntry): boolean {
  if (outer.family !== inner.family || outer.port !== inner.port || inner.prefix < outer.prefix) return false;
  const bits = outer.family === 4 ? 32 : 128;
  const shift = BigInt(bits - outer.prefix);
  return inner.network >> shift === outer.network >> shift;
}
