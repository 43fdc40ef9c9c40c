import { sha256 as sha256Portable } from "@oslojs/crypto/sha2";
import type * as NodeCryptoModule from "node:crypto";

/**
 * Crypto primitives that run unchanged in Node and in a browser, so the
 * ledger verifier (server/ledger/verify.ts) is ONE piece of code in the CLI
 * and in the audit explorer. Nothing here imports a `node:` module: Node's
 * native SHA-256 is picked up at run time through
 * `process.getBuiltinModule` when the host is Node (the CLI verifies
 * millions of entries, and the native hash is several times faster), and
 * the maintained pure-TypeScript SHA-256 of @oslojs/crypto is used
 * everywhere else. Both are pinned to the RFC 6962 / FIPS 180-4 answers by
 * tests (portable.test.ts), so the choice changes speed, never a verdict.
 * Ed25519 verification is WebCrypto (`crypto.subtle`), which Node 20 and
 * current Chromium both implement.
 */

export type NodeCrypto = typeof NodeCryptoModule;

interface NodeProcess {
  getBuiltinModule?: (id: string) => unknown;
}

let forcePortable = false;

/** Node's crypto module when running in Node (≥ 20.16), else undefined. Never a static import. */
export function nodeCrypto(): NodeCrypto | undefined {
  if (forcePortable) return undefined;
  const proc = (globalThis as { process?: NodeProcess }).process;
  const mod = typeof proc?.getBuiltinModule === "function" ? proc.getBuiltinModule("node:crypto") : undefined;
  return (mod ?? undefined) as NodeCrypto | undefined;
}

/** Node's crypto module, or a clear error: only the hub (always Node) signs. */
export function requireNodeCrypto(what: string): NodeCrypto {
  const mod = nodeCrypto();
  if (mod === undefined) throw new Error(`${what} needs Node's crypto module (signing happens only in the hub)`);
  return mod;
}

/** Tests only: behave as in a browser (no Node fast paths). Returns a function that restores the default. */
export function usePortablePrimitivesForTests(): () => void {
  forcePortable = true;
  refresh();
  return () => {
    forcePortable = false;
    refresh();
  };
}

type Hash = (data: Uint8Array) => Uint8Array;
let sha256Impl: Hash = pickSha256();

function pickSha256(): Hash {
  const node = nodeCrypto();
  if (node !== undefined && typeof node.hash === "function") {
    const hash = node.hash;
    // One-shot hash(): no Hash object per call (the verifier hashes twice per entry).
    return (data) => {
      const out = hash("sha256", data, "buffer") as Uint8Array;
      return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
    };
  }
  return (data) => sha256Portable(data);
}

function refresh(): void {
  sha256Impl = pickSha256();
  keyCache.clear();
}

/** SHA-256 of bytes, synchronous, in every runtime. */
export function sha256(data: Uint8Array): Uint8Array {
  return sha256Impl(data);
}

// Imported WebCrypto keys by public key (hex): a log key verifies thousands of checkpoints.
const keyCache = new Map<string, Promise<CryptoKey>>();

function subtle(): SubtleCrypto {
  const s = (globalThis as { crypto?: Crypto }).crypto?.subtle;
  if (s === undefined) throw new Error("WebCrypto (crypto.subtle) is not available: a browser needs a secure context (https or localhost)");
  return s;
}

function importEd25519(publicKey: Uint8Array): Promise<CryptoKey> {
  const id = toHex(publicKey);
  let key = keyCache.get(id);
  if (key === undefined) {
    key = subtle().importKey("raw", copy(publicKey), { name: "Ed25519" }, false, ["verify"]);
    keyCache.set(id, key);
    // A key WebCrypto refuses is not cached: the next call fails the same way, without a rejected promise lingering.
    key.catch(() => keyCache.delete(id));
  }
  return key;
}

/** Ed25519 (RFC 8032) verification with WebCrypto; false for any malformed input rather than an exception. */
export async function verifyEd25519Raw(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  try {
    const key = await importEd25519(publicKey);
    return await subtle().verify({ name: "Ed25519" }, key, copy(signature), copy(message));
  } catch {
    return false;
  }
}

/** A fresh ArrayBuffer-backed copy (WebCrypto's BufferSource typing refuses SharedArrayBuffer views). */
function copy(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(bytes.length);
  out.set(bytes);
  return out;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i] as number];
  return out;
}
