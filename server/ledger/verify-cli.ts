import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { parseVerifierKey } from "./note";
import { describeFailure, verifyExport, type VerifyOptions } from "./verify";

/**
 * `leasehold verify FILE --key KEY`: the offline verdict. Exit codes: 0 when
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

  out.write(`log:           ${report.origin ?? "(unknown)"}\n`);
  out.write(`key:           ${key.key.name}+${key.key.keyIdHex}\n`);
  const schema = options.checkEntries === true ? ", every entry schema-checked" : "";
  out.write(`entries:       ${report.entries} read, leaf hashes and tree recomputed${schema}\n`);
  out.write(`checkpoints:   ${report.checkpointsVerified} signatures and roots verified`);
  out.write(report.latestCheckpoint === null ? "\n" : ` (latest: size ${report.latestCheckpoint.size}, root ${report.latestCheckpoint.root})\n`);
  const { verified, unchecked, witnesses } = report.cosignatures;
  out.write(
    `cosignatures:  ${verified} verified${witnesses.length > 0 ? ` (${witnesses.join(", ")})` : ""}, ${unchecked} unchecked (witness key not supplied)\n`,
  );
  if (report.ok) {
    out.write(
      `VERIFIED in ${seconds}s: all ${report.entries} entries are covered by log-signed checkpoints whose roots match the recomputed tree, so the log was only appended to across them\n`,
    );
    return EXIT_VERIFIED;
  }
  out.write(`FAILED: ${describeFailure(report.failure ?? { line: 0, reason: "unknown failure" })}\n`);
  return EXIT_FAILED;
}
