import { requireActiveAdmin } from "../../admins";
import { listActiveLeases, revokeLease } from "../../leases";
import type { CliContext } from "../context";
import { EXIT } from "../io";
import { parseCommandArgs, requireFlag, splitSubcommand } from "../args";

const USAGE = [
  "leasehold lease list",
  "       leasehold lease break ID --as ADMIN",
  "",
  "list shows every active host lease with its holder's name (agents that get HOST_BUSY see",
  "only an opaque holder id and when the lease ends). break ends a lease at once: sealed in the",
  "ledger as lease/1 \"revoked\" under the named admin; the holder's next call no longer runs",
  "under it (it takes a new lease, or gets HOST_BUSY if another holder took the host).",
].join("\n");

type Parsed = { sub: "list" } | { sub: "break"; id: string; as: string };

function parse(args: string[]): Parsed {
  const { sub, rest } = splitSubcommand(args, ["list", "break"]);
  if (sub === "list") {
    parseCommandArgs(rest, {});
    return { sub };
  }
  const { values, positionals } = parseCommandArgs(rest, { as: { type: "string" } }, { min: 1, max: 1, label: "lease ID" });
  return { sub, id: positionals[0] as string, as: requireFlag(values, "as") };
}

export const leaseCommand = {
  name: "lease",
  summary: "list active host leases, or break one (as a named admin)",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    const parsed: Parsed = parse(args);
    const lines = await ctx.withDatabase(`leasehold lease ${parsed.sub}`, async ({ handle }) => {
      if (parsed.sub === "list") {
        const active = await listActiveLeases(handle.db);
        if (active.length === 0) return ["no active leases"];
        return active.map((l) => `${l.id}  ${l.host}  ${l.mode}  ${l.holder} (${l.holder_id})  since ${l.created_at}  until ${l.expires_at} (idle ${l.idle_expires_at})`);
      }
      const admin = await requireActiveAdmin(handle.db, parsed.as);
      const ended = await revokeLease(handle.db, parsed.id, admin);
      return [`lease ${ended.id} (${ended.mode}) broken by ${admin.username}; sealed as lease/1 revoked`];
    });
    for (const line of lines) ctx.out(line);
    return EXIT.ok;
  },
};
