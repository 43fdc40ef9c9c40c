// Signing facts: which schemes are present and the SHA-256 of each signer
// certificate. Nothing here verifies a signature — every fact says so in its
// source — so "signed" means "carries signature structures", not "authentic".
//
// v1 (JAR signing): META-INF/<name>.RSA|DSA|EC holds a PKCS#7 SignedData.
// v2/v3/v3.1: the APK Signing Block sits just before the central directory:
//   u64 size | (u64 len, u32 id, value)* | u64 size | "APK Sig Block 42"
// and each scheme's value is a length-prefixed list of signers whose signed
// data starts with length-prefixed digests, then length-prefixed certificates.

import { X509Certificate, createHash } from "node:crypto";
import { DerError, pkcs7Certificates } from "./der";
import type { FactSet, Limitations } from "./facts";
import type { InspectLimits } from "./limits";
import { type ReadBudget, type ZipArchive, readEntry } from "./zip";

const MAGIC = Buffer.from("APK Sig Block 42", "latin1");
export const BLOCK_IDS: Readonly<Record<number, string>> = Object.freeze({
  0x7109871a: "v2",
  0xf05368c0: "v3",
  0x1b93ad61: "v3.1",
  0x6dff800d: "source-stamp-v2",
  0x42726577: "verity-padding",
  0x504b4453: "dependency-info",
});

export interface CertificateFact {
  sha256: string;
  subject: string | null;
}

function describeCert(der: Buffer): CertificateFact {
  let subject: string | null;
  try {
    subject = new X509Certificate(der).subject.replace(/\n/g, ", ");
  } catch {
    subject = null;
  }
  return { sha256: createHash("sha256").update(der).digest("hex"), subject };
}

function v1Facts(zip: ZipArchive, limits: InspectLimits, budget: ReadBudget, facts: FactSet, lim: Limitations): boolean {
  const files = zip.entries.filter((e) => /^META-INF\/[^/]+\.(RSA|DSA|EC)$/i.test(e.name) && zip.byName.get(e.name) === e);
  const out: { file: string; signature_file_present: boolean; certificates: CertificateFact[] }[] = [];
  for (const e of files.slice(0, 16)) {
    const base = e.name.replace(/\.[^.]+$/, "");
    const sf = zip.byName.has(`${base}.SF`);
    const der = readEntry(zip, e, { ...limits, maxEntryBytes: Math.min(limits.maxEntryBytes, 1024 * 1024) }, budget, lim);
    let certificates: CertificateFact[] = [];
    if (der !== null) {
      try {
        certificates = pkcs7Certificates(der).map(describeCert);
      } catch (err) {
        lim.add(`${e.name}: PKCS#7 not parsed (${err instanceof DerError ? err.message : "malformed"})`);
      }
    }
    out.push({ file: e.name, signature_file_present: sf, certificates });
  }
  if (out.length === 0) return false;
  facts.observed(
    "signing.v1",
    { manifest_present: zip.byName.has("META-INF/MANIFEST.MF"), signers: out },
    "META-INF/*.RSA|DSA|EC PKCS#7 certificates (signatures not verified)",
  );
  return true;
}

interface Cursor {
  buf: Buffer;
  p: number;
  end: number;
}

function lp(c: Cursor): Cursor {
  if (c.p + 4 > c.end) throw new Error("length prefix runs past its container");
  const n = c.buf.readUInt32LE(c.p);
  const start = c.p + 4;
  if (start + n > c.end) throw new Error("length-prefixed value runs past its container");
  c.p = start + n;
  return { buf: c.buf, p: start, end: start + n };
}

/** Certificates of each signer of a v2/v3/v3.1 scheme block value. */
function schemeSigners(value: Buffer): CertificateFact[][] {
  const signers: CertificateFact[][] = [];
  const all = { buf: value, p: 0, end: value.length };
  const list = lp(all);
  while (list.p < list.end && signers.length < 16) {
    const signer = lp(list);
    const signed = lp(signer);
    lp(signed); // digests
    const certs = lp(signed);
    const found: CertificateFact[] = [];
    while (certs.p < certs.end && found.length < 16) {
      const c = lp(certs);
      found.push(describeCert(c.buf.subarray(c.p, c.end)));
    }
    signers.push(found);
  }
  return signers;
}

function signingBlockFacts(zip: ZipArchive, limits: InspectLimits, facts: FactSet, lim: Limitations): string[] {
  const cd = zip.centralDirectoryOffset;
  const footer = zip.source.read(cd - 24, 24);
  if (cd < 32 || footer.length !== 24 || !footer.subarray(8).equals(MAGIC)) {
    facts.observed("signing.block", null, "no APK Signing Block magic before the central directory");
    return [];
  }
  const size = Number(footer.readBigUInt64LE(0));
  if (size > limits.maxSigningBlockBytes || size + 8 > cd || size < 24) {
    lim.add(`APK Signing Block declares ${size} bytes; not read (limit ${limits.maxSigningBlockBytes}, or larger than the space before the central directory)`);
    return [];
  }
  const start = cd - size - 8;
  const block = zip.source.read(start, size + 8);
  if (block.length !== size + 8 || Number(block.readBigUInt64LE(0)) !== size) {
    lim.add("APK Signing Block's two size fields disagree; not read");
    return [];
  }
  const ids: string[] = [];
  const schemes: string[] = [];
  let p = 8;
  const pairsEnd = block.length - 24;
  while (p + 12 <= pairsEnd && ids.length < 64) {
    const len = Number(block.readBigUInt64LE(p));
    if (len < 4 || p + 8 + len > pairsEnd) {
      lim.add("APK Signing Block pair runs past the block; later pairs not read");
      break;
    }
    const id = block.readUInt32LE(p + 8);
    const name = BLOCK_IDS[id] ?? `0x${id.toString(16).padStart(8, "0")}`;
    ids.push(name);
    if (name === "v2" || name === "v3" || name === "v3.1") {
      const val = block.subarray(p + 12, p + 8 + len);
      try {
        const signers = schemeSigners(val);
        facts.observed(`signing.${name}`, { signers: signers.map((certificates) => ({ certificates })) }, `APK Signing Block at ${start}, id ${name} (signatures not verified)`);
        schemes.push(name);
      } catch (err) {
        lim.add(`APK Signing Block ${name} value malformed: ${(err as Error).message}`);
      }
    }
    p += 8 + len;
  }
  facts.observed("signing.block", { offset: start, bytes: size + 8, ids }, `APK Signing Block ("APK Sig Block 42") before the central directory`);
  return schemes;
}

export function signingFacts(zip: ZipArchive, limits: InspectLimits, budget: ReadBudget, facts: FactSet, lim: Limitations): void {
  const schemes: string[] = [];
  if (v1Facts(zip, limits, budget, facts, lim)) schemes.push("v1");
  schemes.push(...signingBlockFacts(zip, limits, facts, lim));
  const from = schemes.map((s) => `signing.${s}`);
  facts.derived("signing.schemes", schemes, "signature structures found (present, not cryptographically verified)", from);
}
