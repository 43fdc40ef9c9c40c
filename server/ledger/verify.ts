import { canonicalize } from "../trust/jcs";
import { asciiText, concatBytes, isAscii, scanView, utf8 } from "../trust/portable/bytes";
import { decodeBase64Strict, encodeBase64 } from "../trust/ledger/base64";
import { verifyCheckpointNoteAsync } from "../trust/ledger/checkpoint";
import { decodeEntry } from "./entry";
import { EXPORT_FORMAT } from "./export-id";
import { equalHashes, hashLeaf } from "../trust/ledger/hash";
import { SIGNATURE_TYPE, parseVerifierKey, type VerifierKey } from "../trust/ledger/note";
import { CompactRange } from "../trust/ledger/tree";
import { verifyCosignatureAsync } from "../trust/ledger/witness";
import { ApprovalChecker, type ApprovalCheckReport } from "./verify-approvals";

/**
 * Offline verification of a ledger export with the log's public key alone.
 *
 * One streaming pass, O(log n) memory: every entry's bytes are re-hashed and
 * compared with the leaf hash the hub integrated; the tree is rebuilt leaf by
 * leaf; each checkpoint's signature is checked and its root compared with the
 * rebuilt root at its size. Matching roots at successive checkpoints prove
 * the log between them was only appended to (the rebuilt tree is one tree),
 * so no separate consistency proof is needed. Verification stops at the first
 * problem and says where it is: a changed byte anywhere in the file either
 * breaks a hash, a signature, or the file's exact canonical form.
 *
 * The SAME code runs in `leasehold verify` and in the browser's audit
 * explorer: its import graph has no node: module (verify.test.ts bundles it
 * for the browser to prove it), hashing is ../portable/crypto and signatures
 * are WebCrypto Ed25519. Per-line work is synchronous; only lines that need
 * a signature check (checkpoints, cosignatures) return a promise.
 */

export interface VerifyOptions {
  /**
   * Trusted witness cosignature/v1 verifier keys. Each one is REQUIRED to
   * have cosigned the export's final checkpoint; cosignatures from other
   * keys are checked for integrity and reported as unchecked.
   */
  witnessKeys?: readonly string[];
  /**
   * A signed checkpoint the auditor saved earlier or got from a witness (a
   * C2SP signed note; extra cosignature lines are ignored here). The export
   * must be consistent with it — its rebuilt tree has the same root at that
   * size — and at least as large. This is what catches an export cut at an
   * earlier checkpoint: the file alone cannot show what it no longer holds.
   */
  checkpoint?: string;
  /**
   * Also decode every entry against its schema (default false: it costs
   * several times the hashing, and the signed roots already bind every byte).
   */
  checkEntries?: boolean;
  /**
   * Approvals at or above this risk with no passkey signature, and actions at
   * or above it that ran under a grant created without one, fail
   * verification (default: only reported).
   */
  requirePasskeyFrom?: "high" | "critical";
  /** Called after each chunk of input with the running counts (the browser shows progress with it). */
  onProgress?: (progress: VerifyProgress) => void;
}

export interface VerifyProgress {
  /** Entries read and checked so far. */
  entries: number;
  /** Bytes of the export consumed so far. */
  bytes: number;
}

export interface VerifyFailure {
  /** 1-based line number in the export file. */
  line: number;
  /**
   * The first leaf index known to be bad, when one can be named: always an
   * entry the file holds. Entries that are missing are named in `reason`.
   */
  index?: number;
  /** Where a bad entry must be when it cannot be pinned to one index (a rewrite with recomputed leaf hashes). */
  range?: { from: number; to: number };
  reason: string;
}

export interface VerifyReport {
  ok: boolean;
  origin: string | null;
  entries: number;
  checkpointsVerified: number;
  latestCheckpoint: { size: number; root: string } | null;
  cosignatures: { verified: number; unchecked: number; witnesses: string[] };
  /** Set when a checkpoint was supplied and the export proved consistent with it. */
  supplied: { size: number; root: string } | null;
  /** Witnesses (names) whose cosignature on the final checkpoint was required and found. */
  finalCosigners: string[];
  /** Passkey-signed approvals and grants checked, and high/critical actions nobody signed for (verify-approvals.ts). */
  approvals: ApprovalCheckReport;
  failure: VerifyFailure | null;
}

type Chunk = Uint8Array | string;

const ENTRY_PREFIX = '{"entry":"';
const INDEX_PART = '","index":';
const LEAF_PART = ',"kind":"entry","leaf_hash":"';
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

class Failure extends Error {
  constructor(readonly failure: VerifyFailure) {
    super(failure.reason);
  }
}

function parseRecord(text: string, line: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Failure({ line, reason: "line is not JSON" });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Failure({ line, reason: "line is not a JSON object" });
  let canonical: string;
  try {
    canonical = canonicalize(value);
  } catch {
    throw new Failure({ line, reason: "line is not canonical JSON" });
  }
  if (canonical !== text) throw new Failure({ line, reason: "line is not in canonical (RFC 8785) form — the file was edited" });
  return value as Record<string, unknown>;
}

function exactKeys(record: Record<string, unknown>, keys: readonly string[], line: number, what: string): void {
  const actual = Object.keys(record).sort();
  const wanted = [...keys].sort();
  if (actual.length !== wanted.length || actual.some((k, i) => k !== wanted[i])) {
    throw new Failure({ line, reason: `${what} line must have exactly the fields ${wanted.join(", ")}` });
  }
}

/** "entry 7 is missing" or "entries 7..9 are missing". */
function missing(from: number, to: number): string {
  return from === to ? `entry ${from} is missing` : `entries ${from}..${to} are missing`;
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Entry lines are the hot path (one per entry), so they are matched by hand
 * against the exact canonical layout instead of JSON.parse + canonicalize.
 * Returns undefined when the line is not shaped like an entry line at all.
 */
function splitEntryLine(text: string): { entryB64: string; indexText: string; leafB64: string } | undefined {
  if (!text.startsWith(ENTRY_PREFIX)) return undefined;
  const entryEnd = text.indexOf(INDEX_PART, ENTRY_PREFIX.length);
  if (entryEnd < 0) return undefined;
  const indexStart = entryEnd + INDEX_PART.length;
  const indexEnd = text.indexOf(LEAF_PART, indexStart);
  if (indexEnd < 0) return undefined;
  const leafStart = indexEnd + LEAF_PART.length;
  if (text.length !== leafStart + 44 + 2 || !text.endsWith('"}')) return undefined;
  const indexText = text.slice(indexStart, indexEnd);
  if (!/^(?:0|[1-9][0-9]{0,15})$/.test(indexText)) return undefined;
  return { entryB64: text.slice(ENTRY_PREFIX.length, entryEnd), indexText, leafB64: text.slice(leafStart, leafStart + 44) };
}

/**
 * The verifier's state machine; one call per line, throws Failure. A line
 * returns a promise only when it needs an asynchronous (WebCrypto) check, so
 * the per-entry hot path stays synchronous; a check added for a kind of
 * entry (e.g. approval assertions) returns a promise from entry() the same way.
 */
class ExportVerifier {
  readonly report: VerifyReport = newReport(null);
  private readonly tree = new CompactRange();
  private readonly seenWitnesses = new Set<string>();
  private readonly trustedWitnesses: Set<string>;
  private readonly checkEntries: boolean;
  private lines = 0;
  private headerSeen = false;
  private ended = false;
  private checkpointLines = 0;
  private cosignatureLines = 0;
  /** The most recent checkpoint, for the cosignature lines that follow it. */
  private current: { size: number; body: string } | null = null;
  private previousKind: "header" | "entry" | "checkpoint" | "cosignature" | null = null;
  private lastVerifiedSize: number | null = null;
  /** Trusted witness keys that cosigned the most recent checkpoint. */
  private currentCosigners = new Set<string>();
  /** The largest checkpoint size each trusted witness cosigned. */
  private readonly lastCosignedBy = new Map<string, number>();
  /** The supplied checkpoint, until the rebuilt tree reaches its size. */
  private anchor: { size: number; root: Uint8Array; origin: string } | null;
  /** Passkey approvals and grants: fed every entry and the passkey/assertion/grant_assertion records, judged after the last line. */
  readonly approvals: ApprovalChecker;

  constructor(
    private readonly key: VerifierKey,
    options: VerifyOptions,
    anchor: { size: number; root: Uint8Array; origin: string } | null,
  ) {
    this.trustedWitnesses = new Set(options.witnessKeys ?? []);
    this.checkEntries = options.checkEntries ?? false;
    this.anchor = anchor;
    this.approvals = new ApprovalChecker(options.requirePasskeyFrom);
  }

  /** Compares the rebuilt tree with the supplied checkpoint once it reaches that size. */
  private checkAnchor(number: number): void {
    const anchor = this.anchor;
    if (anchor === null || this.tree.size !== anchor.size) return;
    if (!equalHashes(this.tree.root(), anchor.root)) {
      const since = this.lastVerifiedSize === null ? "" : `, after checkpoint size ${this.lastVerifiedSize}`;
      throw new Failure({
        line: number,
        ...(anchor.size > 0 ? { range: { from: this.lastVerifiedSize ?? 0, to: anchor.size - 1 } } : {}),
        reason: `not consistent with the supplied checkpoint: at size ${anchor.size} this export's tree has root ${encodeBase64(this.tree.root())}, the supplied checkpoint signed ${encodeBase64(anchor.root)} — the log was rewritten at or before index ${anchor.size - 1}${since}, or the hub signed two histories (a split view)`,
      });
    }
    this.report.supplied = { size: anchor.size, root: encodeBase64(anchor.root) };
    this.anchor = null;
  }

  line(text: string): void | Promise<void> {
    const number = ++this.lines;
    if (this.ended) throw new Failure({ line: number, reason: "content after the end line" });
    if (!this.headerSeen) return this.header(text, number);
    const entry = splitEntryLine(text);
    if (entry !== undefined) return this.entry(entry, number);
    if (text.startsWith('{"entry":')) throw new Failure({ line: number, index: this.tree.size, reason: `entry line after entry ${this.tree.size - 1} is malformed` });
    const record = parseRecord(text, number);
    switch (record.kind) {
      case "checkpoint":
        return this.checkpoint(record, number);
      case "cosignature":
        return this.cosignature(record, number);
      case "end":
        return this.end(record, number);
      case "passkey":
        exactKeys(record, ["kind", "credential_id", "public_key"], number, "passkey");
        return this.approvals.passkey(record, number, (f) => {
          throw new Failure(f);
        });
      case "assertion":
        exactKeys(record, ["kind", "approval_id", "credential_id", "authenticator_data", "client_data_json", "signature", "nonce"], number, "assertion");
        return this.approvals.assertion(record, number, (f) => {
          throw new Failure(f);
        });
      case "grant_assertion":
        exactKeys(record, ["kind", "grant_id", "credential_id", "authenticator_data", "client_data_json", "signature", "nonce"], number, "grant_assertion");
        return this.approvals.grantAssertion(record, number, (f) => {
          throw new Failure(f);
        });
      default:
        throw new Failure({ line: number, reason: `unknown record kind ${JSON.stringify(record.kind)}` });
    }
  }

  private header(text: string, number: number): void {
    const record = parseRecord(text, number);
    exactKeys(record, ["format", "origin", "log_key"], number, "header");
    if (record.format !== EXPORT_FORMAT) throw new Failure({ line: number, reason: `not a ${EXPORT_FORMAT} file` });
    if (typeof record.origin !== "string" || record.origin === "") throw new Failure({ line: number, reason: "header origin must be a non-empty string" });
    if (record.log_key !== this.key.text) {
      throw new Failure({ line: number, reason: `export declares log key ${String(record.log_key)}, but the key given is ${this.key.text}` });
    }
    if (this.anchor !== null && this.anchor.origin !== record.origin) {
      throw new Failure({ line: number, reason: `the supplied checkpoint is for origin ${JSON.stringify(this.anchor.origin)}, this export for ${JSON.stringify(record.origin)}` });
    }
    this.report.origin = record.origin;
    this.headerSeen = true;
    this.previousKind = "header";
    this.checkAnchor(number);
  }

  private entry({ entryB64, indexText, leafB64 }: { entryB64: string; indexText: string; leafB64: string }, number: number): void {
    const index = Number(indexText);
    const expected = this.tree.size;
    if (index !== expected) {
      // No index: the entry expected here is not on this line (missing, or later in the file).
      throw new Failure({
        line: number,
        reason:
          index > expected
            ? `expected entry ${expected}, found entry ${index}: ${missing(expected, index - 1)}`
            : `expected entry ${expected}, found entry ${index} again: duplicate or out-of-order entry`,
      });
    }
    const bytes = decodeBase64Strict(entryB64);
    if (bytes === undefined) throw new Failure({ line: number, index, reason: `entry ${index}: bytes are not canonical base64` });
    const leafHash = hashLeaf(bytes);
    if (encodeBase64(leafHash) !== leafB64) {
      throw new Failure({ line: number, index, reason: `entry ${index}: bytes do not hash to the integrated leaf hash` });
    }
    if (this.checkEntries) {
      const decoded = decodeEntry(bytes);
      if (!decoded.ok) throw new Failure({ line: number, index, reason: `entry ${index}: not a valid ledger entry: ${decoded.reason}` });
    }
    this.approvals.entry(index, bytes, number);
    this.tree.append(leafHash);
    this.report.entries = this.tree.size;
    this.previousKind = "entry";
    if (this.anchor !== null) this.checkAnchor(number);
  }

  private async checkpoint(record: Record<string, unknown>, number: number): Promise<void> {
    exactKeys(record, ["kind", "note"], number, "checkpoint");
    if (typeof record.note !== "string") throw new Failure({ line: number, reason: "checkpoint note must be a string" });
    const verified = await verifyCheckpointNoteAsync(record.note, this.key, { origin: this.report.origin as string });
    if (!verified.ok) throw new Failure({ line: number, reason: `checkpoint: ${verified.reason}` });
    if (verified.note.signatures.length !== 1) {
      // Unknown signature lines could be altered unnoticed; cosignatures travel on their own lines.
      throw new Failure({ line: number, reason: "checkpoint note must carry exactly one signature, the log's" });
    }
    const { size, root } = verified.checkpoint;
    const have = this.tree.size;
    if (size > have) {
      throw new Failure({
        line: number,
        reason: `checkpoint at size ${size} follows only ${have} entries: ${missing(have, size - 1)} (deleted or truncated)`,
      });
    }
    if (size < have) {
      throw new Failure({ line: number, reason: `checkpoint at size ${size} appears after entry ${have - 1}; it must directly follow entry ${size - 1}` });
    }
    if (!equalHashes(this.tree.root(), root)) {
      const since = this.lastVerifiedSize === null ? "and no earlier checkpoint verified" : `after checkpoint size ${this.lastVerifiedSize}`;
      throw new Failure({
        line: number,
        ...(size > 0 ? { range: { from: this.lastVerifiedSize ?? 0, to: size - 1 } } : {}),
        reason: `checkpoint at size ${size}: root mismatch — log rewritten at or before index ${size - 1}, ${since}`,
      });
    }
    this.lastVerifiedSize = size;
    this.checkpointLines += 1;
    this.report.checkpointsVerified += 1;
    this.report.latestCheckpoint = { size, root: encodeBase64(root) };
    this.current = { size, body: verified.body };
    this.currentCosigners = new Set();
    this.previousKind = "checkpoint";
  }

  private async cosignature(record: Record<string, unknown>, number: number): Promise<void> {
    exactKeys(record, ["kind", "line", "size", "witness_key"], number, "cosignature");
    if (this.previousKind !== "checkpoint" && this.previousKind !== "cosignature") {
      throw new Failure({ line: number, reason: "cosignature line must follow its checkpoint" });
    }
    const current = this.current;
    if (current === null || record.size !== current.size) {
      throw new Failure({ line: number, reason: `cosignature is for size ${String(record.size)}, but follows the checkpoint at size ${current?.size}` });
    }
    if (typeof record.line !== "string" || typeof record.witness_key !== "string") {
      throw new Failure({ line: number, reason: "cosignature line and witness_key must be strings" });
    }
    // Checked even for untrusted witnesses: it proves the line is intact.
    const check = await verifyCosignatureAsync(current.body, record.line, record.witness_key);
    if (!check.ok) throw new Failure({ line: number, reason: `cosignature on checkpoint at size ${current.size}: ${check.reason}` });
    if (this.trustedWitnesses.has(record.witness_key)) {
      this.report.cosignatures.verified += 1;
      this.seenWitnesses.add(check.witness.name);
      this.currentCosigners.add(record.witness_key);
      this.lastCosignedBy.set(record.witness_key, current.size);
    } else {
      this.report.cosignatures.unchecked += 1;
    }
    this.cosignatureLines += 1;
    this.previousKind = "cosignature";
  }

  private end(record: Record<string, unknown>, number: number): void {
    // Three forms (EXPORT_FORMAT.md § end): exports written before passkey records count none of
    // them, then passkeys and assertions, now grant assertions too. Every form stays readable.
    const counted = "passkeys" in record || "assertions" in record || "grant_assertions" in record;
    const countsGrants = "grant_assertions" in record;
    const fields = ["kind", "entries", "checkpoints", "cosignatures"];
    if (counted) fields.push("passkeys", "assertions");
    if (countsGrants) fields.push("grant_assertions");
    exactKeys(record, fields, number, "end");
    const have = this.approvals.recordCounts();
    if (counted && (record.passkeys !== have.passkeys || record.assertions !== have.assertions)) {
      throw new Failure({ line: number, reason: `end line promises ${String(record.passkeys)} passkeys and ${String(record.assertions)} assertions; the file has ${have.passkeys}, ${have.assertions}` });
    }
    if ((countsGrants ? record.grant_assertions : 0) !== have.grantAssertions) {
      throw new Failure({
        line: number,
        reason: countsGrants
          ? `end line promises ${String(record.grant_assertions)} grant assertions; the file has ${have.grantAssertions}`
          : `the file has ${have.grantAssertions} grant_assertion records, but its end line counts none (an end line without grant_assertions is from an export that carries none)`,
      });
    }
    if (!isCount(record.entries) || !isCount(record.checkpoints) || !isCount(record.cosignatures)) {
      throw new Failure({ line: number, reason: "end line counts must be non-negative integers" });
    }
    const size = this.tree.size;
    if (record.entries !== size || record.checkpoints !== this.checkpointLines || record.cosignatures !== this.cosignatureLines) {
      throw new Failure({
        line: number,
        reason: `end line promises ${record.entries} entries, ${record.checkpoints} checkpoints, ${record.cosignatures} cosignatures; the file has ${size}, ${this.checkpointLines}, ${this.cosignatureLines}`,
      });
    }
    this.ended = true;
  }

  /** Called after the last line; decides whether the whole file verified. */
  finish(): VerifyReport {
    if (!this.headerSeen) throw new Failure({ line: 1, reason: "empty file: no header" });
    if (!this.ended) throw new Failure({ line: this.lines + 1, reason: `no end line: the export is truncated after entry ${this.tree.size - 1}` });
    if (this.lastVerifiedSize === null) throw new Failure({ line: this.lines, reason: "no signed checkpoint: nothing in this export is vouched for" });
    if (this.lastVerifiedSize < this.tree.size) {
      throw new Failure({
        line: this.lines,
        index: this.lastVerifiedSize,
        reason: `entries ${this.lastVerifiedSize}..${this.tree.size - 1} are not covered by any signed checkpoint`,
      });
    }
    if (this.anchor !== null) {
      // The rebuilt tree never reached the supplied checkpoint's size.
      const last = this.tree.size;
      throw new Failure({
        line: this.lines,
        reason: `the export holds ${last} entries (its final checkpoint is at size ${this.lastVerifiedSize}), but the supplied checkpoint is at size ${this.anchor.size}: ${missing(last, this.anchor.size - 1)} — the export was cut short or the log rolled back`,
      });
    }
    const finalSize = this.lastVerifiedSize;
    const absent: string[] = [];
    for (const witness of this.trustedWitnesses) {
      if (this.currentCosigners.has(witness)) continue;
      const name = parseVerifierKey(witness);
      const label = name.ok ? `${name.key.name} (key id ${name.key.keyIdHex})` : witness;
      const earlier = this.lastCosignedBy.get(witness);
      absent.push(`${label}${earlier === undefined ? " cosigned no checkpoint in this export" : ` last cosigned the checkpoint at size ${earlier}`}`);
    }
    if (absent.length > 0) {
      throw new Failure({
        line: this.lines,
        reason: `the final checkpoint (size ${finalSize}) carries no cosignature by a witness given with --witness: ${absent.join("; ")}`,
      });
    }
    this.report.finalCosigners = [...this.seenWitnesses].sort();
    this.report.cosignatures.witnesses = [...this.seenWitnesses].sort();
    this.report.ok = true;
    return this.report;
  }

  get lineCount(): number {
    return this.lines;
  }
}

/** A report of nothing verified yet; `ok` becomes true only when the whole export has been checked. */
function newReport(failure: VerifyFailure | null): VerifyReport {
  return {
    ok: false,
    origin: null,
    entries: 0,
    checkpointsVerified: 0,
    latestCheckpoint: null,
    cosignatures: { verified: 0, unchecked: 0, witnesses: [] },
    supplied: null,
    finalCosigners: [],
    approvals: { signed: 0, signedGrants: 0, unsigned: [], passkeys: 0, unsignedGrants: [] },
    failure,
  };
}

function emptyReport(reason: string): VerifyReport {
  return newReport({ line: 0, reason });
}

function usableKey(logKey: string | VerifierKey): VerifierKey | string {
  const key = typeof logKey === "string" ? parseVerifierKey(logKey) : { ok: true as const, key: logKey };
  if (!key.ok) return `log key: ${key.reason}`;
  if (key.key.type !== SIGNATURE_TYPE.ed25519) return "log key must be an Ed25519 (type 0x01) note verifier key";
  return key.key;
}

/** Verifies an export given as a byte (or text) stream, e.g. fs.createReadStream(path). */
export async function verifyExport(
  chunks: AsyncIterable<Chunk> | Iterable<Chunk>,
  logKey: string | VerifierKey,
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  const key = usableKey(logKey);
  if (typeof key === "string") return emptyReport(key);
  let anchor: { size: number; root: Uint8Array; origin: string } | null = null;
  if (options.checkpoint !== undefined) {
    // The log's signature on it is what makes it evidence; witness lines on it are ignored here.
    const verified = await verifyCheckpointNoteAsync(options.checkpoint, key);
    if (!verified.ok) return emptyReport(`supplied checkpoint: ${verified.reason}`);
    anchor = { size: verified.checkpoint.size, root: verified.checkpoint.root, origin: verified.checkpoint.origin };
  }
  const verifier = new ExportVerifier(key, options, anchor);
  try {
    let carry: Uint8Array = new Uint8Array(0);
    let consumed = 0;
    for await (const chunk of chunks) {
      const bytes = typeof chunk === "string" ? utf8(chunk) : chunk;
      const data = scanView(carry.length === 0 ? bytes : concatBytes(carry, bytes));
      let start = 0;
      for (let nl = data.indexOf(10, start); nl >= 0; nl = data.indexOf(10, start)) {
        const line = data.subarray(start, nl);
        let text: string;
        // Entry lines are ASCII; decoding ASCII byte for byte is exact and much cheaper than a checked UTF-8 decode.
        if (isAscii(line)) text = asciiText(line);
        else {
          try {
            text = strictUtf8.decode(line);
          } catch {
            throw new Failure({ line: verifier.lineCount + 1, reason: "line is not valid UTF-8" });
          }
        }
        const pending = verifier.line(text);
        if (pending !== undefined) await pending;
        start = nl + 1;
      }
      carry = data.slice(start);
      consumed += bytes.length;
      options.onProgress?.({ entries: verifier.report.entries, bytes: consumed });
    }
    if (carry.length > 0) throw new Failure({ line: verifier.lineCount + 1, reason: "file does not end with a newline (truncated or appended to)" });
    const report = verifier.finish();
    // Passkey signatures are checked last (WebCrypto is asynchronous), once every entry and record is in.
    const approvalFailure = await verifier.approvals.finish();
    report.approvals = verifier.approvals.report();
    if (approvalFailure !== null) throw new Failure(approvalFailure);
    return report;
  } catch (error) {
    if (error instanceof Failure) {
      verifier.report.failure = error.failure;
      verifier.report.ok = false;
      verifier.report.approvals = verifier.approvals.report();
      return verifier.report;
    }
    throw error;
  }
}

/** Verifies an export given as lines without their newlines (e.g. from a database cursor or a test). */
export async function verifyExportLines(
  lines: AsyncIterable<string> | Iterable<string>,
  logKey: string | VerifierKey,
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  async function* withNewlines(): AsyncGenerator<string> {
    for await (const line of lines) yield `${line}\n`;
  }
  return verifyExport(withNewlines(), logKey, options);
}

/** A one-line human verdict for a report. */
export function describeFailure(failure: VerifyFailure): string {
  const where = failure.line > 0 ? `line ${failure.line}` : "input";
  const index =
    failure.index !== undefined ? `, first bad index ${failure.index}` : failure.range !== undefined ? `, bad entry within indices ${failure.range.from}..${failure.range.to}` : "";
  return `${where}${index}: ${failure.reason}`;
}
