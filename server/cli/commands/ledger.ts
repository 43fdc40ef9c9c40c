import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { listWitnesses, registerWitness } from "../../ledger/cosignatures";
import { hashActor } from "../../ledger/entry";
import { exportLedgerToFile } from "../../ledger/export";
import { loadOrCreateLogKey } from "../../ledger/log-key";
import { keyDirOf } from "../../hub/identity";
import { latestCheckpoint, pinnedLogIdentity, withCosignatures } from "../../ledger/prove";
import { runVerify } from "../../ledger/verify-cli";
import { LeaseholdError } from "../../errors";
import { parseCommandArgs, requireFlag, splitSubcommand } from "../args";
import type { CliContext } from "../context";
import { EXIT, UsageError } from "../io";

export const ledgerCommand = {
  name: "ledger",
  summary: "the audit log: public key, newest checkpoint, witnesses (ledger key|checkpoint|witness add KEY|witness list)",
  usage: "leasehold ledger key | leasehold ledger checkpoint | leasehold ledger witness add KEY | leasehold ledger witness list",
  async run(args: string[], ctx: CliContext): Promise<number> {
    const { sub, rest } = splitSubcommand(args, ["key", "checkpoint", "witness"]);
    const witness = sub === "witness" ? splitSubcommand(rest, ["add", "list"]) : undefined;
    const { positionals } = parseCommandArgs(witness?.rest ?? rest, {}, witness?.sub === "add" ? { min: 1, max: 1, label: "witness KEY" } : { min: 0, max: 0 });
    const text = await ctx.withDatabase(`leasehold ledger ${sub}`, async ({ config, handle }) => {
      if (witness?.sub === "add") {
        const actor = hashActor("system", `cli:${os.userInfo().username}`);
        const record = await registerWitness(handle.db, positionals[0]!, actor);
        return `witness ${record.name} (key id ${record.key_id}) registered; its cosignatures are now accepted`;
      }
      if (witness?.sub === "list") {
        const witnesses = await listWitnesses(handle.db);
        return witnesses.length === 0 ? "no witnesses registered" : witnesses.map((w) => `${w.key_id}  ${w.name}  ${w.verifier_key}`).join("\n");
      }
      if (sub === "key") {
        // The pinned key is the log's; before the first checkpoint it is this hub's own.
        const pinned = await pinnedLogIdentity(handle.db);
        return pinned?.verifier ?? loadOrCreateLogKey(keyDirOf(config), config.publicUrl).verifier;
      }
      const head = await latestCheckpoint(handle.db);
      if (!head) throw new LeaseholdError("NOT_FOUND", "the log has no checkpoint yet (nothing has been appended)", { tier: "ledger" });
      // With its cosignatures, as /api/ledger/checkpoint serves it: save it and pass it to `verify --checkpoint` later.
      return (await withCosignatures(handle.db, head.size, head.note)).trimEnd();
    });
    ctx.out(text);
    return EXIT.ok;
  },
};

export const exportCommand = {
  name: "export",
  summary: "write the audit log (entries, checkpoints, cosignatures) to a file for offline verification",
  usage: "leasehold export --out FILE",
  async run(args: string[], ctx: CliContext): Promise<number> {
    const { values } = parseCommandArgs(args, { out: { type: "string" } });
    const out = path.resolve(ctx.cwd, requireFlag(values, "out", "the FILE to write"));
    if (!fs.existsSync(path.dirname(out))) throw new LeaseholdError("INVALID_ARGUMENT", `the directory of --out, ${path.dirname(out)}, does not exist`);
    const started = Date.now();
    const summary = await ctx.withDatabase("leasehold export", async ({ config, handle }) => {
      const identity = (await pinnedLogIdentity(handle.db)) ?? loadOrCreateLogKey(keyDirOf(config), config.publicUrl);
      // Written beside the target and renamed: a reader never sees half an export.
      const temp = `${out}.partial-${process.pid}`;
      try {
        const counts = await exportLedgerToFile(handle.db, identity, temp);
        fs.renameSync(temp, out);
        return { ...counts, key: identity.verifier };
      } finally {
        fs.rmSync(temp, { force: true });
      }
    });
    ctx.out(`exported ${summary.entries} entries and ${summary.checkpoints} checkpoints to ${out} in ${((Date.now() - started) / 1000).toFixed(2)} s`);
    ctx.out(`verify offline with: leasehold verify ${out} --key '${summary.key}'`);
    return EXIT.ok;
  },
};

export const verifyCommand = {
  name: "verify",
  summary:
    "verify an exported audit log offline with only the log's public key; --checkpoint proves it extends a checkpoint you saved, --witness requires that witness's cosignature on its final checkpoint",
  usage: "leasehold verify FILE --key KEY|KEYFILE [--checkpoint CPFILE] [--witness KEY|KEYFILE ...] [--require-passkey high|critical]",
  async run(args: string[], ctx: CliContext): Promise<number> {
    const { values, positionals } = parseCommandArgs(
      args,
      { key: { type: "string" }, witness: { type: "string", multiple: true }, checkpoint: { type: "string" }, "require-passkey": { type: "string" } },
      { min: 1, max: 1, label: "FILE (the export to verify)" },
    );
    const keyText = readKeyArgument("--key", requireFlag(values, "key", "the log's note verifier key, or a file holding it"), ctx.cwd);
    const witnessKeys = (values.witness ?? []).map((w) => readKeyArgument("--witness", w, ctx.cwd));
    const checkpoint = values.checkpoint === undefined ? undefined : readCheckpointFile(values.checkpoint, ctx.cwd);
    // Approvals of actions at or above this risk with no passkey signature fail (default: listed as UNSIGNED).
    const requirePasskey = values["require-passkey"];
    if (requirePasskey !== undefined && requirePasskey !== "high" && requirePasskey !== "critical") throw new UsageError("--require-passkey must be high or critical");
    let buffered = "";
    const code = await runVerify(path.resolve(ctx.cwd, positionals[0]!), keyText, {
      write(text: string) {
        buffered += text;
        let newline: number;
        while ((newline = buffered.indexOf("\n")) >= 0) {
          ctx.out(buffered.slice(0, newline));
          buffered = buffered.slice(newline + 1);
        }
      },
    }, { witnessKeys, ...(checkpoint === undefined ? {} : { checkpoint }), ...(requirePasskey === undefined ? {} : { requirePasskeyFrom: requirePasskey }) });
    if (buffered) ctx.out(buffered);
    return code;
  },
};

/**
 * A key given inline, or the path of a file that holds one. A key that is
 * neither is a usage error: verify exits 2 when it could not check at all.
 */
function readKeyArgument(flag: string, value: string, cwd: string): string {
  if (value.includes("+")) return value.trim();
  const file = path.resolve(cwd, value);
  if (!fs.existsSync(file)) throw new UsageError(`${flag} ${JSON.stringify(value)} is neither a verifier key nor a readable file`);
  return fs.readFileSync(file, "utf8").trim();
}

/**
 * A checkpoint file as `leasehold ledger checkpoint` or /api/ledger/checkpoint
 * gives it: a signed note, possibly with cosignature lines. Read as bytes
 * and passed on unchanged: the verifier refuses any second spelling.
 */
function readCheckpointFile(value: string, cwd: string): string {
  const file = path.resolve(cwd, value);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`--checkpoint ${JSON.stringify(value)} is not a readable file: ${(error as Error).message}`);
  }
  // `leasehold ledger checkpoint` prints the note without its final newline; a saved copy may lack it.
  return text.endsWith("\n") ? text : `${text}\n`;
}
