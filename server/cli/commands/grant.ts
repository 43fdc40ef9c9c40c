import { requireActiveAdmin } from "../../admins";
import { createGrant, listGrants, revokeGrant } from "../../policy/grants";
import type { CliContext } from "../context";
import { EXIT, UsageError } from "../io";
import { parseExpiry, parseFlags, requireFlag } from "./args";

const USAGE = [
  "leasehold grant create --tool T --host H --max-risk LEVEL --uses N --expires D [--pattern P] --as ADMIN",
  "       leasehold grant list",
  "       leasehold grant revoke ID --as ADMIN",
  "",
  "LEVEL is read_only, low, medium or high (critical is never grantable). D is a duration",
  "(30m, 2h, 7d) or an ISO time. P is a regular expression that must match the whole command",
  "(or code, or path). --as names the acting admin; the change is sealed in the ledger.",
].join("\n");

type Parsed =
  | { sub: "list" }
  | { sub: "revoke"; id: string; as: string }
  | { sub: "create"; as: string; tool: string; host: string; maxRisk: string; uses: number; expiresAt: Date; pattern: string | null };

function parse(args: string[]): Parsed {
  const [sub, ...rest] = args;
  if (sub === "list") {
    if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
    return { sub };
  }
  if (sub === "revoke") {
    const { flags, positionals } = parseFlags(rest, ["as"]);
    if (positionals.length !== 1) throw new UsageError("give exactly one grant ID");
    return { sub, id: positionals[0] as string, as: requireFlag(flags, "as") };
  }
  if (sub !== "create") throw new UsageError(`unknown subcommand ${JSON.stringify(sub ?? "")}`);
  const { flags, positionals } = parseFlags(rest, ["tool", "host", "max-risk", "uses", "expires", "pattern", "as"]);
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const usesText = requireFlag(flags, "uses");
  if (!/^\d{1,6}$/.test(usesText)) throw new UsageError("--uses must be a whole number");
  return {
    sub,
    as: requireFlag(flags, "as"),
    tool: requireFlag(flags, "tool"),
    host: requireFlag(flags, "host"),
    maxRisk: requireFlag(flags, "max-risk"),
    uses: Number(usesText),
    expiresAt: parseExpiry(requireFlag(flags, "expires")),
    pattern: flags.get("pattern") ?? null,
  };
}

export const grantCommand = {
  name: "grant",
  summary: "create, list or revoke pre-approved grants (as a named admin)",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    // A UsageError reaches main(), which prints it with the usage and exits 2.
    const parsed: Parsed = parse(args);
    const lines = await ctx.withDatabase(`leasehold grant ${parsed.sub}`, async ({ handle }) => {
      if (parsed.sub === "list") {
        const active = await listGrants(handle.db);
        if (active.length === 0) return ["no active grants"];
        return active.map((g) => `${g.id}  ${g.tool} on ${g.host}  ≤${g.maxRisk}  ${g.usesRemaining} uses left  until ${g.expiresAt.toISOString()}${g.argumentPattern === null ? "" : `  pattern ${JSON.stringify(g.argumentPattern)}`}`);
      }
      const admin = await requireActiveAdmin(handle.db, parsed.as);
      if (parsed.sub === "revoke") {
        const grant = await revokeGrant(handle.db, admin, parsed.id);
        return [`grant ${grant.id} revoked by ${admin.username}`];
      }
      const grant = await createGrant(handle.db, admin, parsed);
      return [`grant ${grant.id} created: ${grant.tool} on ${grant.host} up to ${grant.maxRisk}, ${grant.usesRemaining} uses, until ${grant.expiresAt.toISOString()}`];
    });
    for (const line of lines) ctx.out(line);
    return EXIT.ok;
  },
};
