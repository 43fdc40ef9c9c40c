import { LeaseholdError } from "../../errors";
import { knownToolNames } from "../../mcp";
import { authenticateToken, createToken } from "../../tokens";
import type { CliContext } from "../context";
import { EXIT } from "../io";
import { CLI_ACTOR } from "./token";
import { parseTokenCreateArgs, TOKEN_CREATE_FLAGS } from "./token-options";

/**
 * Ready-to-paste MCP client settings. The hub stores only token hashes, so
 * it cannot print an existing token again: pass it with `--token`, or let
 * this command issue a new one with `--create NAME` and the `token create`
 * flags. A `--token` is checked first: settings for a token the hub would
 * refuse are not printed.
 */
const USAGE = [
  "leasehold mcp-config --token lh_...",
  `       leasehold mcp-config --create NAME ${TOKEN_CREATE_FLAGS.replace("--name N ", "")}`,
].join("\n");

export function clientSettings(publicUrl: string, secret: string): { command: string; json: string } {
  const url = `${publicUrl}/api/mcp`;
  return {
    command: `claude mcp add --transport http leasehold ${url} --header "Authorization: Bearer ${secret}"`,
    json: JSON.stringify({ mcpServers: { leasehold: { type: "http", url, headers: { Authorization: `Bearer ${secret}` } } } }, null, 2),
  };
}

export const mcpConfigCommand = {
  name: "mcp-config",
  summary: "print MCP client settings (claude mcp add line and JSON) for a token",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    const tokenIndex = args.indexOf("--token");
    let result: { publicUrl: string; secret: string; note: string };
    if (tokenIndex >= 0) {
      const secret = args[tokenIndex + 1];
      if (args.length !== 2 || tokenIndex !== 0 || secret === undefined) throw new LeaseholdError("INVALID_ARGUMENT", `usage: ${USAGE}`);
      result = await ctx.withDatabase("leasehold mcp-config", async ({ config, handle }) => {
        const check = await authenticateToken(handle.db, secret);
        if (!check.ok) throw new LeaseholdError("UNAUTHENTICATED", `this hub would refuse that token (${check.reason})`, { hint: "leasehold token list shows the tokens; --create issues a new one" });
        return { publicUrl: config.publicUrl, secret, note: `token ${check.token.id} "${check.token.name}"` };
      });
    } else if (args.includes("--create")) {
      const now = new Date();
      const { input, rest } = parseTokenCreateArgs(args, now, "--create");
      if (rest.length > 0) throw new LeaseholdError("INVALID_ARGUMENT", `unexpected argument ${JSON.stringify(rest[0])} (usage: ${USAGE})`);
      result = await ctx.withDatabase("leasehold mcp-config", async ({ config, handle }) => {
        const { token, secret } = await createToken(handle.db, { ...input, createdBy: CLI_ACTOR }, { knownTools: knownToolNames(), now });
        return { publicUrl: config.publicUrl, secret, note: `new token ${token.id} "${token.name}" (expires ${token.expiresAt?.toISOString() ?? "never"}; shown only here)` };
      });
    } else {
      ctx.err(`usage: ${USAGE}`);
      return EXIT.usage;
    }
    const settings = clientSettings(result.publicUrl, result.secret);
    ctx.out(`# Claude Code (${result.note}):`);
    ctx.out(settings.command);
    ctx.out("");
    ctx.out("# Clients that take a JSON block (mcpServers):");
    ctx.out(settings.json);
    return EXIT.ok;
  },
};
