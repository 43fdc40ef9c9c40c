import { requireActiveAdmin } from "../../admins";
import { approve, deny, listApprovals } from "../../approvals";
import type { CliContext } from "../context";
import { EXIT, UsageError } from "../io";
import { parseFlags, requireFlag } from "./args";

const USAGE = [
  "leasehold approvals list",
  "       leasehold approvals approve ID [--reason R] --as ADMIN",
  "       leasehold approvals deny ID --reason R --as ADMIN",
  "",
  "--as names the acting admin (see `leasehold admin create`). The CLI trusts whoever can",
  "run it against the hub's data directory or DATABASE_URL; the decision is sealed in the",
  "ledger under that admin, exactly like the browser's approve/deny.",
].join("\n");

type Parsed = { sub: "list" } | { sub: "approve" | "deny"; id: string; reason: string | undefined; as: string };

function parse(args: string[]): Parsed {
  const [sub, ...rest] = args;
  if (sub === "list") {
    if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
    return { sub };
  }
  if (sub !== "approve" && sub !== "deny") throw new UsageError(`unknown subcommand ${JSON.stringify(sub ?? "")}`);
  const { flags, positionals } = parseFlags(rest, ["reason", "as"]);
  if (positionals.length !== 1) throw new UsageError("give exactly one approval ID");
  const reason = sub === "deny" ? requireFlag(flags, "reason") : flags.get("reason");
  return { sub, id: positionals[0] as string, reason, as: requireFlag(flags, "as") };
}

export const approvalsCommand = {
  name: "approvals",
  summary: "list pending approvals, approve or deny one (as a named admin)",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    // A UsageError reaches main(), which prints it with the usage and exits 2.
    const parsed: Parsed = parse(args);
    const lines = await ctx.withDatabase(`leasehold approvals ${parsed.sub}`, async ({ handle }) => {
      if (parsed.sub === "list") {
        const pending = await listApprovals(handle.db);
        if (pending.length === 0) return ["no pending approvals"];
        return pending.map((a) => `${a.id}  ${a.operation} on ${a.host ?? "?"}  risk ${a.risk}  until ${a.deadline}  ${a.action_hash}`);
      }
      const admin = await requireActiveAdmin(handle.db, parsed.as);
      const row =
        parsed.sub === "approve" ? await approve(handle.db, parsed.id, admin, parsed.reason ?? null) : await deny(handle.db, parsed.id, admin, parsed.reason ?? "");
      return [`approval ${row.id} ${row.state} by ${admin.username} (action_hash ${row.actionHash})`];
    });
    for (const line of lines) ctx.out(line);
    return EXIT.ok;
  },
};
