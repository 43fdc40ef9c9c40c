import { requireActiveAdmin } from "../../admins";
import { approve, deny, listApprovals } from "../../approvals";
import type { CliContext } from "../context";
import { EXIT } from "../io";
import { parseCommandArgs, requireFlag, splitSubcommand } from "../args";

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
  const { sub, rest } = splitSubcommand(args, ["list", "approve", "deny"]);
  if (sub === "list") {
    parseCommandArgs(rest, {});
    return { sub };
  }
  const { values, positionals } = parseCommandArgs(rest, { reason: { type: "string" }, as: { type: "string" } }, { min: 1, max: 1, label: "approval ID" });
  const reason = sub === "deny" ? requireFlag(values, "reason") : values.reason;
  return { sub, id: positionals[0] as string, reason, as: requireFlag(values, "as") };
}

export const approvalsCommand = {
  name: "approvals",
  summary: "list pending approvals, approve or deny one (as a named admin)",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    // A UsageError reaches main(), which prints it in one line and exits 2.
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
