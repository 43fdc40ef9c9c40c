import { createEnrolCode, enrolCommand, listHostSummaries, publicUrlNote } from "../../hosts";
import { hashActor } from "../../ledger/entry";
import { parseDurationMs } from "../../time/duration";
import { parseCommandArgs, requireFlag, splitSubcommand } from "../args";
import type { CliContext } from "../context";
import { EXIT, UsageError } from "../io";

const USAGE = ["leasehold host enrol-code --name NAME [--ttl 15m]", "       leasehold host list"].join("\n");

/** A code's lifetime: the duration grammar, narrowed to at most five digits of seconds, minutes or hours. */
function parseTtl(text: string): number {
  const ms = /^\d{1,5}[smh]$/.test(text) ? parseDurationMs(text) : undefined;
  if (ms === undefined) throw new UsageError(`--ttl ${JSON.stringify(text)} must look like 90s, 15m or 2h`);
  return ms;
}

export { publicUrlNote };

export const hostCommand = {
  name: "host",
  summary: "enrol hosts (one-time codes for leasehold-guest) and list them",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    const { sub, rest } = splitSubcommand(args, ["enrol-code", "list"]);
    if (sub === "enrol-code") {
      const { values } = parseCommandArgs(rest, { name: { type: "string" }, ttl: { type: "string" } });
      const ttlMs = values.ttl === undefined ? undefined : parseTtl(values.ttl);
      const hostName = requireFlag(values, "name");
      const { result, publicUrl } = await ctx.withDatabase("leasehold host enrol-code", async ({ handle, config }) => ({
        result: await createEnrolCode(handle.db, { name: hostName, ttlMs, actor: hashActor("system", "cli") }),
        publicUrl: config.publicUrl,
      }));
      ctx.out(`enrolment code for host ${JSON.stringify(result.name)} (one use, expires ${result.expiresAt.toISOString()}):`);
      ctx.out(result.code);
      ctx.out("run on the host, as root (the code on stdin; or set LEASEHOLD_ENROL_CODE):");
      ctx.out(`  ${enrolCommand(publicUrl, result.code)}`);
      const transportNote = publicUrlNote(publicUrl);
      if (transportNote !== null) ctx.err(transportNote);
      ctx.err("Only the code's SHA-256 is stored; it cannot be shown again.");
      return EXIT.ok;
    }
    parseCommandArgs(rest, {});
    const hosts = await ctx.withDatabase("leasehold host list", ({ handle }) => listHostSummaries(handle.db));
    if (hosts.length === 0) ctx.out("no hosts (leasehold host enrol-code --name NAME mints a code)");
    for (const h of hosts) {
      const state = h.witness_failure !== null ? `WITNESS CHECK FAILED: ${h.witness_failure}` : h.online ? "online" : "offline";
      ctx.out(`${h.name}  ${state}  tier ${h.tier ?? "-"}  last seen ${h.last_seen_at ?? "never"}${h.seen_from === null ? "" : ` from ${h.seen_from}`}`);
    }
    return EXIT.ok;
  },
};
