// Just enough DER to walk a PKCS#7 SignedData to its certificates. Definite
// lengths only (DER forbids the indefinite form); lengths are checked against
// the enclosing element so a hostile length cannot read outside it.

export interface Tlv {
  tag: number;
  /** Offset of the tag byte. */
  start: number;
  /** Offset of the content. */
  content: number;
  /** Offset just past the content. */
  end: number;
}

export class DerError extends Error {}

export function readTlv(buf: Buffer, at: number, limit = buf.length): Tlv {
  if (at + 2 > limit) throw new DerError("truncated DER element");
  const tag = buf[at]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError("multi-byte DER tags are not used by PKCS#7");
  let len = buf[at + 1]!;
  let content = at + 2;
  if (len === 0x80) throw new DerError("indefinite length is not DER");
  if (len > 0x80) {
    const n = len & 0x7f;
    if (n > 4 || content + n > limit) throw new DerError("DER length field too long");
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[content + i]!;
    content += n;
  }
  const end = content + len;
  if (end > limit) throw new DerError("DER element runs past its container");
  return { tag, start: at, content, end };
}

export function childrenOf(buf: Buffer, parent: Tlv, max = 10_000): Tlv[] {
  const out: Tlv[] = [];
  let p = parent.content;
  while (p < parent.end) {
    if (out.length >= max) throw new DerError("too many DER children");
    const t = readTlv(buf, p, parent.end);
    out.push(t);
    p = t.end;
  }
  return out;
}

const OID_SIGNED_DATA = Buffer.from([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02]);

/** The DER bytes of each certificate in a PKCS#7 SignedData ContentInfo. */
export function pkcs7Certificates(buf: Buffer): Buffer[] {
  const ci = readTlv(buf, 0);
  if (ci.tag !== 0x30) throw new DerError("ContentInfo is not a SEQUENCE");
  const [oid, explicit] = childrenOf(buf, ci);
  if (oid === undefined || oid.tag !== 0x06 || !buf.subarray(oid.content, oid.end).equals(OID_SIGNED_DATA)) throw new DerError("ContentInfo is not signedData");
  if (explicit === undefined || explicit.tag !== 0xa0) throw new DerError("signedData content missing");
  const sd = readTlv(buf, explicit.content, explicit.end);
  if (sd.tag !== 0x30) throw new DerError("SignedData is not a SEQUENCE");
  const certSet = childrenOf(buf, sd).find((t) => t.tag === 0xa0);
  if (certSet === undefined) return [];
  return childrenOf(buf, certSet, 64).map((t) => buf.subarray(t.start, t.end));
}
