import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { canonicalize } from "../canonical";
import { encodeBase64 } from "../trust/ledger/base64";
import { parseSignedCheckpoint } from "../trust/ledger/checkpoint";

/**
 * The ledger export file, `leasehold-ledger-export/1` (see EXPORT_FORMAT.md).
 * One record per line, each line the RFC 8785 canonical JSON of the record
 * followed by a newline, so every record has exactly one byte spelling and
 * any changed byte is either a signature failure, a hash mismatch, or a line
 * that is not canonical.
 */

import { EXPORT_FORMAT } from "./export-id";

export { EXPORT_FORMAT };

export interface ExportHeader {
  format: typeof EXPORT_FORMAT;
  origin: string;
  /** The log's note verifier key. Informational: trust comes from the key the verifier is given. */
  log_key: string;
}

export interface ExportEntry {
  index: number;
  /** The entry bytes as stored. */
  bytes: Uint8Array;
  /** The leaf hash the hub integrated for this index (from its node store, not recomputed). */
  leafHash: Uint8Array;
}

export interface ExportCosignature {
  /** The witness's cosignature/v1 verifier key (type 0x04). */
  witnessKey: string;
  /** The signature line, `— <name> <base64>`, without newline. */
  line: string;
}

export interface ExportCheckpoint {
  /** The signed checkpoint note, carrying only the log's signature. */
  note: string;
  cosignatures?: readonly ExportCosignature[];
}

/** A registered passkey's public key: what `leasehold verify` checks approval assertions with. */
export interface ExportPasskey {
  /** base64url credential id. */
  credentialId: string;
  /** base64url COSE public key. */
  publicKey: string;
}

/** A passkey assertion stored with an approval (server/passkeys StoredAssertion, all base64url). */
export interface ExportAssertion {
  approvalId: string;
  credentialId: string;
  authenticatorData: string;
  clientDataJson: string;
  signature: string;
  nonce: string;
}

/** A passkey assertion stored with a grant over its canonical scope (grants.assertion, all base64url). */
export interface ExportGrantAssertion {
  grantId: string;
  credentialId: string;
  authenticatorData: string;
  clientDataJson: string;
  signature: string;
  nonce: string;
}

export interface ExportSource {
  origin: string;
  logKey: string;
  /** Entries in index order, one by one or in pages (a page costs one await, not one per entry). */
  entries: AsyncIterable<ExportEntry | readonly ExportEntry[]> | Iterable<ExportEntry | readonly ExportEntry[]>;
  /** Checkpoints in size order; each is written right after the entry that completes it. */
  checkpoints: AsyncIterable<ExportCheckpoint> | Iterable<ExportCheckpoint>;
  /**
   * Passkeys (every one ever registered, removed ones too) and the assertions
   * of passkey-signed approvals, written after the last checkpoint. When
   * given, the end line counts them; older exports have neither.
   */
  passkeys?: AsyncIterable<ExportPasskey> | Iterable<ExportPasskey>;
  assertions?: AsyncIterable<ExportAssertion> | Iterable<ExportAssertion>;
  /**
   * The assertions of passkey-signed grants, written after the approval
   * assertions. When given, the end line counts them (`grant_assertions`).
   */
  grantAssertions?: AsyncIterable<ExportGrantAssertion> | Iterable<ExportGrantAssertion>;
}

export function headerLine(origin: string, logKey: string): string {
  const header: ExportHeader = { format: EXPORT_FORMAT, origin, log_key: logKey };
  return `${canonicalize(header)}\n`;
}

export function entryLine(index: number, bytes: Uint8Array, leafHash: Uint8Array): string {
  // Written by hand in JCS key order because this is the hot path (one line per
  // entry, millions per export); the test suite checks it equals canonicalize().
  return `{"entry":"${encodeBase64(bytes)}","index":${index},"kind":"entry","leaf_hash":"${encodeBase64(leafHash)}"}\n`;
}

export function checkpointLine(note: string): string {
  return `${canonicalize({ kind: "checkpoint", note })}\n`;
}

export function cosignatureLine(size: number, cosignature: ExportCosignature): string {
  return `${canonicalize({ kind: "cosignature", line: cosignature.line, size, witness_key: cosignature.witnessKey })}\n`;
}

export function endLine(counts: { entries: number; checkpoints: number; cosignatures: number; passkeys?: number; assertions?: number; grantAssertions?: number }): string {
  const base = { checkpoints: counts.checkpoints, cosignatures: counts.cosignatures, entries: counts.entries, kind: "end" };
  const passkeys = counts.passkeys === undefined && counts.assertions === undefined && counts.grantAssertions === undefined ? {} : { passkeys: counts.passkeys ?? 0, assertions: counts.assertions ?? 0 };
  const grants = counts.grantAssertions === undefined ? {} : { grant_assertions: counts.grantAssertions };
  return `${canonicalize({ ...base, ...passkeys, ...grants })}\n`;
}

export function passkeyLine(passkey: ExportPasskey): string {
  return `${canonicalize({ credential_id: passkey.credentialId, kind: "passkey", public_key: passkey.publicKey })}\n`;
}

export function assertionLine(a: ExportAssertion): string {
  return `${canonicalize({
    approval_id: a.approvalId,
    authenticator_data: a.authenticatorData,
    client_data_json: a.clientDataJson,
    credential_id: a.credentialId,
    kind: "assertion",
    nonce: a.nonce,
    signature: a.signature,
  })}\n`;
}

export function grantAssertionLine(a: ExportGrantAssertion): string {
  return `${canonicalize({
    authenticator_data: a.authenticatorData,
    client_data_json: a.clientDataJson,
    credential_id: a.credentialId,
    grant_id: a.grantId,
    kind: "grant_assertion",
    nonce: a.nonce,
    signature: a.signature,
  })}\n`;
}

function checkpointSize(note: string): number {
  const parsed = parseSignedCheckpoint(note);
  if (!parsed.ok) throw new RangeError(`export: unparseable checkpoint note: ${parsed.reason}`);
  return parsed.checkpoint.size;
}

/**
 * Streams the export as text chunks of whole lines (each ending in "\n"). Memory stays O(1) in
 * the log size: entries and checkpoints are merged as they arrive. The
 * writer does not judge what it is given — a tampered database exports as
 * tampered, and the verifier says where.
 */
export async function* exportLines(source: ExportSource): AsyncGenerator<string, void, undefined> {
  yield headerLine(source.origin, source.logKey);
  const checkpoints = toAsyncIterator(source.checkpoints);
  let pending = await nextCheckpoint(checkpoints);
  let entries = 0;
  let checkpointCount = 0;
  let cosignatureCount = 0;

  // Checkpoints up to `upTo` entries, as one string (keeps the per-entry path free of extra awaits).
  async function flush(upTo: number): Promise<string> {
    let out = "";
    while (pending !== undefined && pending.size <= upTo) {
      out += checkpointLine(pending.checkpoint.note);
      checkpointCount += 1;
      for (const cosignature of pending.checkpoint.cosignatures ?? []) {
        out += cosignatureLine(pending.size, cosignature);
        cosignatureCount += 1;
      }
      pending = await nextCheckpoint(checkpoints);
    }
    return out;
  }

  const first = await flush(0);
  if (first !== "") yield first;
  for await (const item of source.entries) {
    const page: readonly ExportEntry[] = isPage(item) ? item : [item];
    let out = "";
    for (const entry of page) {
      entries += 1;
      out += entryLine(entry.index, entry.bytes, entry.leafHash);
      if (pending !== undefined && pending.size <= entries) out += await flush(entries);
    }
    if (out !== "") yield out;
  }
  const rest = await flush(Number.MAX_SAFE_INTEGER);
  if (rest !== "") yield rest;
  if (source.passkeys === undefined && source.assertions === undefined && source.grantAssertions === undefined) {
    yield endLine({ entries, checkpoints: checkpointCount, cosignatures: cosignatureCount });
    return;
  }
  let passkeys = 0;
  let assertions = 0;
  for await (const passkey of source.passkeys ?? []) {
    passkeys += 1;
    yield passkeyLine(passkey);
  }
  for await (const assertion of source.assertions ?? []) {
    assertions += 1;
    yield assertionLine(assertion);
  }
  let grantAssertions: number | undefined;
  if (source.grantAssertions !== undefined) {
    grantAssertions = 0;
    for await (const assertion of source.grantAssertions) {
      grantAssertions += 1;
      yield grantAssertionLine(assertion);
    }
  }
  yield endLine({ entries, checkpoints: checkpointCount, cosignatures: cosignatureCount, passkeys, assertions, ...(grantAssertions === undefined ? {} : { grantAssertions }) });
}

function isPage(item: ExportEntry | readonly ExportEntry[]): item is readonly ExportEntry[] {
  return Array.isArray(item);
}

async function nextCheckpoint(iterator: AsyncIterator<ExportCheckpoint>): Promise<{ checkpoint: ExportCheckpoint; size: number } | undefined> {
  const next = await iterator.next();
  return next.done === true ? undefined : { checkpoint: next.value, size: checkpointSize(next.value.note) };
}

function toAsyncIterator<T>(source: AsyncIterable<T> | Iterable<T>): AsyncIterator<T> {
  if (Symbol.asyncIterator in source) return source[Symbol.asyncIterator]();
  const iterator = source[Symbol.iterator]();
  return { next: async () => iterator.next() };
}

/**
 * Writes lines to a file, batching small lines into large writes and
 * respecting backpressure; resolves once the data is flushed and closed.
 */
export async function writeLinesToFile(path: string, lines: AsyncIterable<string>, options: { mode?: number } = {}): Promise<void> {
  const out = createWriteStream(path, { mode: options.mode ?? 0o600 });
  const closed = once(out, "close");
  // Observed now so an early write error is not an unhandled rejection; awaited below.
  closed.catch(() => undefined);
  try {
    let buffer: string[] = [];
    let buffered = 0;
    for await (const line of lines) {
      buffer.push(line);
      buffered += line.length;
      if (buffered >= 1 << 20) {
        if (!out.write(buffer.join(""))) await once(out, "drain");
        buffer = [];
        buffered = 0;
      }
    }
    if (buffer.length > 0) out.write(buffer.join(""));
  } catch (error) {
    out.destroy();
    throw error;
  }
  out.end();
  await closed;
}
