import { loadConfig } from "../../config";
import { LeaseholdError } from "../../errors";
import { clientSettings, knownToolNames } from "../../mcp";
import { authenticateToken, createToken } from "../../tokens";
import { parseCommandArgs } from "../args";
import type { CliContext } from "../context";
import { EXIT, UsageError } from "../io";
import { CLI_ACTOR } from "./token";
import { TOKEN_CREATE_FLAGS, TOKEN_CREATE_OPTIONS, tokenCreateInput } from "./token-options";

/**
 * Ready-to-paste MCP client settings. The hub stores only token hashes, so
 * it cannot print an existing token again: pass it in `MCP_TOKEN` (never in
 * argv, where every local user reads it through /proc/PID/cmdline; `--token`
 * is refused), or let this command issue a new one with `--create NAME` and
 * the `token create` flags. A given token is checked first: settings for a
 * token the hub would refuse are not printed.
 *
 * Next to the static-token settings it prints the OAuth-ready ones: the same
 * URL with no Authorization header, for clients that run the MCP
 * authorization flow themselves (they discover the hub's authorization
 * server from the 401, and a person consents in the browser). `--oauth`
 * prints only those, and needs neither a token nor the database.
 */
const USAGE = [
  "MCP_TOKEN=lh_... leasehold mcp-config",
  `       leasehold mcp-config --create NAME ${TOKEN_CREATE_FLAGS.replace("--name N ", "")}`,
  "       leasehold mcp-config --oauth",
].join("\n");

export { clientSettings };

/**
 * Settings for a client that speaks the MCP authorization spec (OAuth 2.1):
 * the MCP URL alone — no header, since the client obtains its own token —
 * and how the consent happens. Plain lines, ready to print.
 */
export function oauthClientSettings(publicUrl: string): string[] {
  const url = `${publicUrl}/api/mcp`;
  return [
    "# Clients that run the MCP authorization flow (OAuth 2.1): no token to paste, no Authorization header:",
    `claude mcp add --transport http leasehold ${url}`,
    JSON.stringify({ mcpServers: { leasehold: { type: "http", url } } }, null, 2),
    `# On first connect the client opens ${publicUrl}/oauth/authorize?… in a browser; an owner admin`,
    `# signs in there (${publicUrl}/sign-in) and approves or denies, and may narrow the grant`,
    `# (Read-only, tools, hosts, Access expires). OAuth grants are listed and revoked on ${publicUrl}/tokens.`,
  ];
}

export const mcpConfigCommand = {
  name: "mcp-config",
  summary: "print MCP client settings (claude mcp add line and JSON) for a token, and for OAuth clients",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    // `token` is declared only to be refused with a message saying how to pass it now.
    const { values } = parseCommandArgs(args, { token: { type: "string" }, create: { type: "string" }, oauth: { type: "boolean" }, ...TOKEN_CREATE_OPTIONS });
    if (values.token !== undefined) throw new UsageError("--token is refused: a token on the command line is readable by every local user (/proc/PID/cmdline); pass it in MCP_TOKEN");
    if (values.oauth === true) {
      const other = Object.keys(values).find((k) => k !== "oauth");
      if (other !== undefined) throw new UsageError(`--oauth prints settings without a token and takes no other option (got --${other})`);
      // No database and no token: only the public URL is needed, so this works beside a running hub too.
      const parsed = loadConfig(ctx.env, ctx.cwd);
      if (!parsed.ok) throw new LeaseholdError("CONFIG_INVALID", parsed.message, { tier: "config" });
      for (const line of oauthClientSettings(parsed.config.publicUrl)) ctx.out(line);
      return EXIT.ok;
    }
    let result: { publicUrl: string; secret: string; note: string };
    const given = ctx.env.MCP_TOKEN;
    if (values.create === undefined && given !== undefined && given !== "") {
      const secret = given.trim();
      const other = Object.keys(values)[0];
      if (other !== undefined) throw new UsageError(`MCP_TOKEN takes no other option (got --${other})`);
      result = await ctx.withDatabase("leasehold mcp-config", async ({ config, handle }) => {
        const check = await authenticateToken(handle.db, secret);
        if (!check.ok) throw new LeaseholdError("UNAUTHENTICATED", `this hub would refuse that token (${check.reason})`, { hint: "leasehold token list shows the tokens; --create issues a new one" });
        return { publicUrl: config.publicUrl, secret, note: `token ${check.token.id} "${check.token.name}"` };
      });
    } else if (values.create !== undefined) {
      const now = new Date();
      const input = tokenCreateInput(values.create, values, now);
      result = await ctx.withDatabase("leasehold mcp-config", async ({ config, handle }) => {
        const { token, secret } = await createToken(handle.db, { ...input, createdBy: CLI_ACTOR }, { knownTools: knownToolNames(), now });
        return { publicUrl: config.publicUrl, secret, note: `new token ${token.id} "${token.name}" (expires ${token.expiresAt?.toISOString() ?? "never"}; shown only here)` };
      });
    } else {
      throw new UsageError("set MCP_TOKEN=lh_... in the environment or give --create NAME");
    }
    const settings = clientSettings(result.publicUrl, result.secret);
    ctx.out(`# Claude Code (${result.note}):`);
    ctx.out(settings.command);
    ctx.out("");
    ctx.out("# Clients that take a JSON block (mcpServers):");
    ctx.out(settings.json);
    ctx.out("");
    for (const line of oauthClientSettings(result.publicUrl)) ctx.out(line);
    return EXIT.ok;
  },
};
