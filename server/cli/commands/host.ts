import { createEnrolCode, listHostSummaries } from "../../hosts";
import { hashActor } from "../../ledger/entry";
import { LeaseholdError } from "../../errors";
import type { CliContext } from "../context";
import { EXIT } from "../io";

const USAGE = ["leasehold host enrol-code --name NAME [--ttl 15m]", "       leasehold host list"].join("\n");

function parseTtl(text: string): number {
  const m = /^([1-9][0-9]{0,4})(s|m|h)$/.exec(text);
  if (m === null) throw new LeaseholdError("INVALID_ARGUMENT", `--ttl ${JSON.stringify(text)} must look like 90s, 15m or 2h`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[m[2] as "s" | "m" | "h"];
}

export const hostCommand = {
  name: "host",
  summary: "enrol hosts (one-time codes for leasehold-guest) and list them",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    const [sub, ...rest] = args;
    if (sub === "enrol-code") {
      let name: string | undefined;
      let ttlMs: number | undefined;
      for (let i = 0; i < rest.length; i += 2) {
        const flag = rest[i];
        const value = rest[i + 1];
        if (value === undefined) throw new LeaseholdError("INVALID_ARGUMENT", `${flag ?? ""} needs a value (usage: ${USAGE})`);
        if (flag === "--name") name = value;
        else if (flag === "--ttl") ttlMs = parseTtl(value);
        else throw new LeaseholdError("INVALID_ARGUMENT", `unexpected argument ${JSON.stringify(flag)} (usage: ${USAGE})`);
      }
      if (name === undefined) throw new LeaseholdError("INVALID_ARGUMENT", `--name is required (usage: ${USAGE})`);
      const hostName = name;
      const { result, publicUrl } = await ctx.withDatabase("leasehold host enrol-code", async ({ handle, config }) => ({
        result: await createEnrolCode(handle.db, { name: hostName, ttlMs, actor: hashActor("system", "cli") }),
        publicUrl: config.publicUrl,
      }));
      ctx.out(`enrolment code for host ${JSON.stringify(result.name)} (one use, expires ${result.expiresAt.toISOString()}):`);
      ctx.out(result.code);
      ctx.out("run on the host, as root:");
      ctx.out(`  leasehold-guest enrol --hub ${publicUrl} --code ${result.code}`);
      ctx.err("Only the code's SHA-256 is stored; it cannot be shown again.");
      return EXIT.ok;
    }
    if (sub === "list") {
      if (rest.length > 0) throw new LeaseholdError("INVALID_ARGUMENT", `unexpected argument ${JSON.stringify(rest[0])}`);
      const hosts = await ctx.withDatabase("leasehold host list", ({ handle }) => listHostSummaries(handle.db));
      if (hosts.length === 0) ctx.out("no hosts (leasehold host enrol-code --name NAME mints a code)");
      for (const h of hosts) {
        const state = h.witness_failure !== null ? `WITNESS CHECK FAILED: ${h.witness_failure}` : h.online ? "online" : "offline";
        ctx.out(`${h.name}  ${state}  tier ${h.tier ?? "-"}  last seen ${h.last_seen_at ?? "never"}`);
      }
      return EXIT.ok;
    }
    ctx.err(`usage: ${USAGE}`);
    return EXIT.usage;
  },
};
