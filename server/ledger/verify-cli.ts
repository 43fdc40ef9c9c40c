import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { encodeBase64 } from "../trust/ledger/base64";
import { verifyCheckpointNote } from "../trust/ledger/checkpoint";
import { parseVerifierKey, SIGNATURE_TYPE, type VerifierKey } from "../trust/ledger/note";
import { describeFailure, verifyExport, type VerifyOptions, type VerifyReport } from "./verify";
import { unsignedApprovalLine, unsignedGrantLine } from "./verify-approvals";

/**
 * `leasehold verify FILE --key KEY [--checkpoint CPFILE] [--witness KEY ...]`:
 * the offline verdict. `options.checkpoint` is the supplied checkpoint's
 * text; `options.witnessKeys` are required on the final checkpoint. Exit codes: 0 when
 * everything verifies, 1 when the export fails verification, 2 when it
 * could not be checked at all (bad key, unreadable file). Nothing short of a
 * full pass prints VERIFIED.
 */

export interface VerifyOutput {
  write(text: string): unknown;
}

export const EXIT_VERIFIED = 0;
export const EXIT_FAILED = 1;
export const EXIT_UNUSABLE = 2;

/** Everything `leasehold verify` prints before its verdict line. */
function writeReport(out: VerifyOutput, report: VerifyReport, key: VerifierKey, options: VerifyOptions, supplied: { size: number; root: string } | null): void {
  out.write(`log:           ${report.origin ?? "(unknown)"}\n`);
  out.write(`key:           ${key.name}+${key.keyIdHex}\n`);
  const schema = options.checkEntries === true ? ", every entry schema-checked" : "";
  out.write(`entries:       ${report.entries} read, leaf hashes and tree recomputed${schema}\n`);
  out.write(`checkpoints:   ${report.checkpointsVerified} signatures and roots verified`);
  out.write(report.latestCheckpoint === null ? "\n" : ` (latest: size ${report.latestCheckpoint.size}, root ${report.latestCheckpoint.root})\n`);
  const { verified, unchecked, witnesses } = report.cosignatures;
  const given = options.witnessKeys?.length ?? 0;
  const why = given === 0 ? "witness key not supplied" : `not by the ${given === 1 ? "witness" : `${given} witnesses`} given with --witness`;
  out.write(`cosignatures:  ${verified} verified${witnesses.length > 0 ? ` (${witnesses.join(", ")})` : ""}, ${unchecked} unchecked${unchecked > 0 ? ` (${why})` : ""}\n`);
  if (supplied !== null) {
    out.write(
      report.supplied !== null
        ? `checkpoint:    consistent with the supplied checkpoint (size ${supplied.size}, root ${supplied.root}); the export is at least as large\n`
        : `checkpoint:    supplied at size ${supplied.size}, root ${supplied.root}: NOT proven consistent\n`,
    );
  }
  const { signed, signedGrants, unsigned, passkeys, unsignedGrants } = report.approvals;
  const failedOnApproval = report.failure !== null && /^entry \d+: (approval |grant |action \S+ \(\w+ risk\) ran under grant )/.test(report.failure.reason);
  if (report.ok || failedOnApproval) {
    const checked = report.ok ? "verified" : "checked";
    out.write(
      `passkeys:      ${signed} passkey-signed approval(s) ${checked} (signature by a registered key over the challenge derived from the approval id and action_hash; ${passkeys} registered key(s) in the export)\n`,
    );
    out.write(`grants:        ${signedGrants} passkey-signed grant(s) ${checked} (signature by a registered key over the challenge derived from the grant's sealed scope_digest)\n`);
    for (const u of unsigned) out.write(`UNSIGNED:      ${unsignedApprovalLine(u)}\n`);
    for (const u of unsignedGrants) out.write(`UNSIGNED:      ${unsignedGrantLine(u)}\n`);
  }
  if (given > 0 && report.ok) {
    out.write(`final:         the final checkpoint (size ${report.latestCheckpoint?.size}) is cosigned by every witness given: ${report.finalCosigners.join(", ")}\n`);
  }
}

export async function runVerify(filePath: string, keyText: string, out: VerifyOutput, options: VerifyOptions = {}): Promise<number> {
  const key = parseVerifierKey(keyText.trim());
  if (!key.ok) {
    out.write(`leasehold verify: cannot use the key: ${key.reason}\n`);
    return EXIT_UNUSABLE;
  }
  for (const witness of options.witnessKeys ?? []) {
    const parsed = parseVerifierKey(witness);
    if (!parsed.ok) {
      out.write(`leasehold verify: cannot use witness key ${witness}: ${parsed.reason}\n`);
      return EXIT_UNUSABLE;
    }
    if (parsed.key.type !== SIGNATURE_TYPE.cosignatureV1) {
      out.write(`leasehold verify: --witness ${witness} is not a cosignature/v1 (type 0x04) witness key\n`);
      return EXIT_UNUSABLE;
    }
  }
  let supplied: { size: number; root: string } | null = null;
  if (options.checkpoint !== undefined) {
    const checked = verifyCheckpointNote(options.checkpoint, key.key);
    if (!checked.ok) {
      out.write(`leasehold verify: cannot use the supplied checkpoint: ${checked.reason}\n`);
      return EXIT_UNUSABLE;
    }
    supplied = { size: checked.checkpoint.size, root: encodeBase64(checked.checkpoint.root) };
  }
  try {
    const info = await stat(filePath);
    if (!info.isFile()) throw new Error("not a regular file");
  } catch (error) {
    out.write(`leasehold verify: cannot read ${filePath}: ${(error as Error).message}\n`);
    return EXIT_UNUSABLE;
  }

  const started = Date.now();
  let report;
  try {
    report = await verifyExport(createReadStream(filePath, { highWaterMark: 1 << 20 }), key.key, options);
  } catch (error) {
    out.write(`leasehold verify: cannot read ${filePath}: ${(error as Error).message}\n`);
    return EXIT_UNUSABLE;
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(2);
  writeReport(out, report, key.key, options, supplied);
  if (report.ok) {
    const against = supplied === null ? "" : `, and it extends the checkpoint you supplied`;
    out.write(
      `VERIFIED in ${seconds}s: all ${report.entries} entries are covered by log-signed checkpoints whose roots match the recomputed tree, so the log was only appended to across them${against}\n`,
    );
    return EXIT_VERIFIED;
  }
  out.write(`FAILED: ${describeFailure(report.failure ?? { line: 0, reason: "unknown failure" })}\n`);
  return EXIT_FAILED;
}
