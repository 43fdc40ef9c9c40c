import { requireActiveAdmin } from "../../admins";
import { createGrant, listGrants, revokeGrant } from "../../policy/grants";
import type { CliContext } from "../context";
import { EXIT, UsageError } from "../io";
import { parseCommandArgs, parseExpiry, requireFlag, splitSubcommand } from "../args";

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

const CREATE_OPTIONS = {
  tool: { type: "string" },
  host: { type: "string" },
  "max-risk": { type: "string" },
  uses: { type: "string" },
  expires: { type: "string" },
  pattern: { type: "string" },
  as: { type: "string" },
} as const;

function parse(args: string[]): Parsed {
  const { sub, rest } = splitSubcommand(args, ["create", "list", "revoke"]);
  if (sub === "list") {
    parseCommandArgs(rest, {});
    return { sub };
  }
  if (sub === "revoke") {
    const { values, positionals } = parseCommandArgs(rest, { as: { type: "string" } }, { min: 1, max: 1, label: "grant ID" });
    return { sub, id: positionals[0] as string, as: requireFlag(values, "as") };
  }
  const { values } = parseCommandArgs(rest, CREATE_OPTIONS);
  const usesText = requireFlag(values, "uses");
  if (!/^\d{1,6}$/.test(usesText)) throw new UsageError("--uses must be a whole number");
  return {
    sub,
    as: requireFlag(values, "as"),
    tool: requireFlag(values, "tool"),
    host: requireFlag(values, "host"),
    maxRisk: requireFlag(values, "max-risk"),
    uses: Number(usesText),
    expiresAt: parseExpiry(requireFlag(values, "expires")),
    pattern: values.pattern ?? null,
  };
}

export const grantCommand = {
  name: "grant",
  summary: "create, list or revoke pre-approved grants (as a named admin)",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    // A UsageError reaches main(), which prints it in one line and exits 2.
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
