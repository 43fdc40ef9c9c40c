import { HUB_VERSION } from "../hub/version";
import { runInHub } from "../hub/control-socket";
import { exportCommand, ledgerCommand, verifyCommand } from "./commands/ledger";
import { mcpConfigCommand } from "./commands/mcp-config";
import { adminCommand } from "./commands/admin";
import { approvalsCommand } from "./commands/approvals";
import { grantCommand } from "./commands/grant";
import { hostCommand } from "./commands/host";
import { leaseCommand } from "./commands/lease";
import { snapshotCommand } from "./commands/snapshot";
import { capabilityCommand } from "./commands/capability";
import { migrateCommand } from "./commands/migrate";
import { startCommand } from "./commands/start";
import { tokenCommand } from "./commands/token";
import type { CliContext } from "./context";
import { EXIT, formatError, UsageError } from "./io";
import { HubHoldsDatabase } from "./terminal";

export interface CliCommand {
  name: string;
  summary: string;
  usage: string;
  /**
   * Runs the command. A command that needs the database calls
   * `ctx.withDatabase` before printing anything, so that when a running hub
   * holds the database the whole command can be re-run inside the hub.
   */
  run(args: string[], ctx: CliContext): Promise<number>;
}

/** Every subcommand, in the order `--help` lists them. */
export const COMMANDS: readonly CliCommand[] = [startCommand, migrateCommand, ledgerCommand, exportCommand, verifyCommand, tokenCommand, mcpConfigCommand, adminCommand, approvalsCommand, grantCommand, hostCommand, leaseCommand, snapshotCommand, capabilityCommand];

export function helpText(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = [
    `leasehold ${HUB_VERSION} — let AI agents act on real machines without trusting them`,
    "",
    "usage: leasehold <command> [options]",
    "",
    "commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Every command reads the same environment as the hub: LEASEHOLD_HOST, LEASEHOLD_PORT,",
    "LEASEHOLD_DATA_DIR, LEASEHOLD_PUBLIC_URL and DATABASE_URL (see README.md). While a hub",
    "runs on the same data directory, commands run inside it through its control socket.",
    "`leasehold <command> --help` shows one command's usage.",
  ];
  return lines.join("\n");
}

export async function main(argv: string[], ctx: CliContext): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    ctx.out(helpText());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === "--version" || name === "-v") {
    ctx.out(HUB_VERSION);
    return EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    ctx.err(`leasehold: unknown command ${JSON.stringify(name)} (try: leasehold --help)`);
    return EXIT.usage;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    ctx.out(`usage: ${command.usage}\n\n${command.summary}`);
    return EXIT.ok;
  }
  try {
    return await command.run(rest, ctx);
  } catch (error) {
    if (error instanceof HubHoldsDatabase && command !== startCommand) {
      const env: Record<string, string> = {};
      // MCP_TOKEN too: `mcp-config` takes the token from the environment, never argv (the socket is owner-only).
      for (const [k, v] of Object.entries(ctx.env)) if ((k.startsWith("LEASEHOLD_") || k === "MCP_TOKEN") && v !== undefined) env[k] = v;
      return runInHub(error.dataDir, { argv, env, cwd: ctx.cwd }, ctx);
    }
    if (error instanceof UsageError) {
      // One line, like every other failure; the usage is one --help away.
      ctx.err(`leasehold ${command.name}: ${error.message} (try: leasehold ${command.name} --help)`);
      return EXIT.usage;
    }
    ctx.err(formatError(error));
    return EXIT.failure;
  }
}
