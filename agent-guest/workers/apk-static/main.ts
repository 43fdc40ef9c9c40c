// The apk-static worker program. Bundled into
// one self-contained ESM file and run in the no-network sandbox as
//   node --input-type=module - <operation> <artifact-path>
// with the bundle on stdin, so the operation and path are the LAST two argv
// entries. It reads the artifact and writes exactly one JSON document to
// stdout — nothing else, no file anywhere. Exit 0: a result (possibly
// partial, with limitations); exit 3: the input was refused (INVALID_ARGUMENT);
// exit 1: a bug in the worker (INTERNAL, message withheld).

import { writeSync } from "node:fs";
import { LeaseholdError } from "../../../server/trust/leasehold-error";
import { RESULT_SCHEMA } from "./facts";
import { inspectApk } from "./inspect";
import { preflight } from "./preflight";

export { inspectApk } from "./inspect";
export { preflight } from "./preflight";

export const OPERATIONS = ["apk_inspect", "apk_preflight"] as const;
export type Operation = (typeof OPERATIONS)[number];

export interface CliOutcome {
  exitCode: 0 | 1 | 3;
  document: Record<string, unknown>;
  /** For the sandbox's stderr only (never stdout): what went wrong inside the worker. */
  diagnostic?: string;
}

function refused(message: string): CliOutcome {
  return { exitCode: 3, document: { schema: RESULT_SCHEMA, error: { code: "INVALID_ARGUMENT", message } } };
}

/** Runs one operation; never throws. */
export function runWorker(argv: readonly string[]): CliOutcome {
  if (argv.length < 2) return refused("usage: <operation> <artifact-path>");
  const operation = argv[argv.length - 2]!;
  const path = argv[argv.length - 1]!;
  if (!(OPERATIONS as readonly string[]).includes(operation)) return refused(`unknown operation ${JSON.stringify(operation)}; expected ${OPERATIONS.join(" or ")}`);
  try {
    const result = inspectApk(path);
    const document: Record<string, unknown> = {
      schema: RESULT_SCHEMA,
      operation,
      artifact: result.artifact,
      facts: result.facts,
      ...(operation === "apk_preflight" ? { checks: preflight(result.facts) } : {}),
      limitations: result.limitations,
    };
    return { exitCode: 0, document };
  } catch (err) {
    if (err instanceof LeaseholdError && err.code === "INVALID_ARGUMENT") return refused(err.message);
    const code = (err as NodeJS.ErrnoException | null)?.code;
    if (code === "ENOENT" || code === "EACCES" || code === "EISDIR") return refused(`artifact cannot be opened (${code})`);
    return {
      exitCode: 1,
      document: { schema: RESULT_SCHEMA, error: { code: "INTERNAL", message: "the worker failed; see its stderr" } },
      diagnostic: err instanceof Error ? (err.stack ?? err.message) : String(err),
    };
  }
}

function writeAll(fd: number, text: string): void {
  const buf = Buffer.from(text, "utf8");
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

// Run when executed (stdin module "-", this file, or the bundle), not when a test imports it.
const entry = process.argv[1] ?? "";
if (entry === "-" || /(^|[/\\])(main\.ts|worker\.mjs)$/.test(entry)) {
  const outcome = runWorker(process.argv.slice(2));
  writeAll(1, JSON.stringify(outcome.document) + "\n");
  if (outcome.diagnostic !== undefined) writeAll(2, outcome.diagnostic + "\n");
  process.exitCode = outcome.exitCode;
}
