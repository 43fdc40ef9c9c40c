import { knownToolNames } from "../../mcp";
import { listedStatus, unredeemedGrants } from "../../oauth";
import { createToken, listTokens, revokeToken, type AgentToken } from "../../tokens";
import { parseCommandArgs, requireFlag, splitSubcommand } from "../args";
import type { CliContext } from "../context";
import { EXIT } from "../io";
import { TOKEN_CREATE_FLAGS, TOKEN_CREATE_OPTIONS, tokenCreateInput } from "./token-options";
import { neutraliseOneLine } from "../../text";

/** Who the ledger records for CLI token operations (hashed): the CLI runs as the hub's own account. */
export const CLI_ACTOR = "cli";

const USAGE = [
  `leasehold token create ${TOKEN_CREATE_FLAGS}`,
  "       leasehold token list",
  "",
  "--observe any (sandbox-first): every run_command runs at once under the observe lease",
  "(workspace read-only, /tmp thrown away, no network, cgroup limits) whatever its risk, and",
  "is recorded as observe_scope (not judged read-only); a call passing lease \"write\", and every",
  "operation that needs the workspace writable or network, is rated and held as usual.",
  "Not with --read-only.",
  "       leasehold token revoke ID",
  "",
  "revoke ends what the token started: its held approvals are denied (reason \"token revoked\"),",
  "its queued jobs cancelled and its leases released, each sealed in the ledger; a job a guest",
  "is already running is told to stop (its lease is killed) and its signed result is sealed.",
].join("\n");

function scopeText(token: AgentToken): string {
  const parts = [token.readOnly ? "read-only" : "read-write", `observe=${token.observe}`];
  parts.push(token.tools === null ? "all tools" : `tools=${token.tools.join(",")}`);
  parts.push(token.hosts === null ? "all hosts" : `hosts=${token.hosts.join(",")}`);
  return parts.join("; ");
}

export const tokenCommand = {
  name: "token",
  summary: "issue, list and revoke agent (MCP) bearer tokens",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    const { sub, rest } = splitSubcommand(args, ["create", "list", "revoke"]);
    if (sub === "create") {
      const now = new Date();
      const { values } = parseCommandArgs(rest, { name: { type: "string" }, ...TOKEN_CREATE_OPTIONS });
      const input = tokenCreateInput(requireFlag(values, "name"), values, now);
      const { token, secret } = await ctx.withDatabase("leasehold token create", ({ handle }) =>
        createToken(handle.db, { ...input, createdBy: CLI_ACTOR }, { knownTools: knownToolNames(), now }),
      );
      ctx.out(`token ${token.id} "${neutraliseOneLine(token.name).text}" created (${scopeText(token)}; expires ${token.expiresAt?.toISOString() ?? "never"})`);
      ctx.out(secret);
      ctx.err("This is the only time the token is shown; only its SHA-256 is stored. `MCP_TOKEN=<token> leasehold mcp-config` prints client settings.");
      return EXIT.ok;
    }
    if (sub === "list") {
      parseCommandArgs(rest, {});
      const [tokens, unredeemed] = await ctx.withDatabase("leasehold token list", ({ handle }) => Promise.all([listTokens(handle.db), unredeemedGrants(handle.db)]));
      const now = new Date();
      if (tokens.length === 0) ctx.out("no tokens (leasehold token create ... issues one)");
      for (const token of tokens) {
        // An approved OAuth consent whose code was never redeemed is `pending`, expiring with the code.
        const listed = listedStatus(token, unredeemed, now);
        ctx.out(`${token.id}  ${listed.status.padEnd(7)}  ${JSON.stringify(neutraliseOneLine(token.name).text)}  ${scopeText(token)}  created ${token.createdAt.toISOString()}  expires ${listed.expiresAt?.toISOString() ?? "never"}${token.kind === "oauth" ? `  oauth client ${token.oauthClientId ?? "(removed)"}` : ""}`);
      }
      return EXIT.ok;
    }
    const id = parseCommandArgs(rest, {}, { min: 1, max: 1, label: "token ID (leasehold token list shows ids)" }).positionals[0] as string;
    const result = await ctx.withDatabase("leasehold token revoke", ({ handle }) => revokeToken(handle.db, id, CLI_ACTOR));
    const e = result.ended;
    const ended = `${e.approvalsDenied} held approval(s) denied, ${e.jobsCancelled} queued job(s) cancelled, ${e.leasesReleased} lease(s) released; ${e.jobsRunning} running job(s) told to stop`;
    ctx.out(result.alreadyRevoked ? `token ${id} was already revoked at ${result.token.revokedAt?.toISOString()}; ${e.leasesReleased} lease(s) released` : `token ${id} revoked; its next request is refused; ${ended}`);
    return EXIT.ok;
  },
};
