import { HUB_VERSION } from "../hub/version";
import { runInHub } from "../hub/control-socket";
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

/**
 * One subcommand as main() finds it, before its module is loaded: a command
 * is imported only when it runs (a CLI process is short, and loading every
 * command costs each one most of its start-up).
 */
interface CommandEntry {
  name: string;
  load(): Promise<CliCommand>;
  /**
   * Every run of the command parses its arguments and then calls
   * `withDatabase` before anything else, so while a hub holds the database
   * the command is sent to it whole without being loaded here: the hub
   * would run it whole anyway (usage errors included, in the same words).
   */
  hubFirst: boolean;
}

/** Every subcommand, in the order `--help` lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  { name: "start", hubFirst: false, load: async () => (await import("./commands/start")).startCommand },
  { name: "migrate", hubFirst: true, load: async () => (await import("./commands/migrate")).migrateCommand },
  { name: "ledger", hubFirst: true, load: async () => (await import("./commands/ledger")).ledgerCommand },
  { name: "export", hubFirst: true, load: async () => (await import("./commands/ledger")).exportCommand },
  // Reads the files it is given, offline; never sent to a hub.
  { name: "verify", hubFirst: false, load: async () => (await import("./commands/ledger")).verifyCommand },
  { name: "token", hubFirst: true, load: async () => (await import("./commands/token")).tokenCommand },
  // `--oauth` needs no database.
  { name: "mcp-config", hubFirst: false, load: async () => (await import("./commands/mcp-config")).mcpConfigCommand },
  { name: "admin", hubFirst: true, load: async () => (await import("./commands/admin")).adminCommand },
  { name: "approvals", hubFirst: true, load: async () => (await import("./commands/approvals")).approvalsCommand },
  { name: "grant", hubFirst: true, load: async () => (await import("./commands/grant")).grantCommand },
  { name: "host", hubFirst: true, load: async () => (await import("./commands/host")).hostCommand },
  { name: "lease", hubFirst: true, load: async () => (await import("./commands/lease")).leaseCommand },
  { name: "snapshot", hubFirst: true, load: async () => (await import("./commands/snapshot")).snapshotCommand },
  { name: "capability", hubFirst: true, load: async () => (await import("./commands/capability")).capabilityCommand },
];

/** The command an entry names; a module that exports another name is a build fault, said plainly. */
async function loadCommand(entry: CommandEntry): Promise<CliCommand> {
  const command = await entry.load();
  if (command.name !== entry.name) throw new Error(`the CLI table lists ${JSON.stringify(entry.name)} but its module is ${JSON.stringify(command.name)}`);
  return command;
}

export async function helpText(): Promise<string> {
  const commands = await Promise.all(COMMANDS.map(loadCommand));
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = [
    `leasehold ${HUB_VERSION} — let AI agents act on real machines without trusting them`,
    "",
    "usage: leasehold <command> [options]",
    "",
    "commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
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
    ctx.out(await helpText());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === "--version" || name === "-v") {
    ctx.out(HUB_VERSION);
    return EXIT.ok;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    ctx.err(`leasehold: unknown command ${JSON.stringify(name)} (try: leasehold --help)`);
    return EXIT.usage;
  }
  const wantsHelp = rest.includes("--help") || rest.includes("-h");
  const sendTo = (dataDir: string): Promise<number> => {
    const env: Record<string, string> = {};
    // MCP_TOKEN too: `mcp-config` takes the token from the environment, never argv (the socket is owner-only).
    for (const [k, v] of Object.entries(ctx.env)) if ((k.startsWith("LEASEHOLD_") || k === "MCP_TOKEN") && v !== undefined) env[k] = v;
    return runInHub(dataDir, { argv, env, cwd: ctx.cwd }, ctx);
  };
  if (entry.hubFirst && !wantsHelp && ctx.runningHub !== undefined) {
    const dataDir = await ctx.runningHub();
    if (dataDir !== undefined) return sendTo(dataDir);
  }
  const command = await loadCommand(entry);
  if (wantsHelp) {
    ctx.out(`usage: ${command.usage}\n\n${command.summary}`);
    return EXIT.ok;
  }
  try {
    return await command.run(rest, ctx);
  } catch (error) {
    // A hub that started after the check above, or a command that opens the database only on some paths.
    if (error instanceof HubHoldsDatabase && entry.name !== "start") return sendTo(error.dataDir);
    if (error instanceof UsageError) {
      // One line, like every other failure; the usage is one --help away.
      ctx.err(`leasehold ${command.name}: ${error.message} (try: leasehold ${command.name} --help)`);
      return EXIT.usage;
    }
    ctx.err(formatError(error));
    return EXIT.failure;
  }
}
