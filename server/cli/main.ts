import { HUB_VERSION } from "../hub/version";
import { migrateCommand } from "./commands/migrate";
import { startCommand } from "./commands/start";
import type { CliContext } from "./context";
import { EXIT } from "./io";

export interface CliCommand {
  name: string;
  summary: string;
  usage: string;
  run(args: string[], ctx: CliContext): Promise<number>;
}

/** Every subcommand, in the order `--help` lists them. */
export const COMMANDS: readonly CliCommand[] = [startCommand, migrateCommand];

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
    "LEASEHOLD_DATA_DIR, LEASEHOLD_PUBLIC_URL and DATABASE_URL (see README.md).",
    "`leasehold <command> --help` shows one command's usage.",
  ];
  return lines.join("\n");
}

export async function main(argv: string[], ctx: CliContext): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    console.log(helpText());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === "--version" || name === "-v") {
    console.log(HUB_VERSION);
    return EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    console.error(`leasehold: unknown command ${JSON.stringify(name)} (try: leasehold --help)`);
    return EXIT.usage;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(`usage: ${command.usage}\n\n${command.summary}`);
    return EXIT.ok;
  }
  return command.run(rest, ctx);
}
