import { loadConfig } from "../../config";
import { openHubDatabase } from "../../db";
import { EXIT, printError } from "../io";
import type { CliContext } from "../context";

export const migrateCommand = {
  name: "migrate",
  summary: "apply pending database migrations and exit (the hub also does this at start)",
  usage: "leasehold migrate",
  async run(args: string[], ctx: CliContext): Promise<number> {
    if (args.length > 0) {
      console.error(`leasehold migrate: unexpected argument ${JSON.stringify(args[0])}`);
      return EXIT.usage;
    }
    const parsed = loadConfig(ctx.env, ctx.cwd);
    if (!parsed.ok) {
      console.error(`leasehold: ${parsed.message} [CONFIG_INVALID]`);
      return EXIT.failure;
    }
    try {
      const opened = await openHubDatabase(parsed.config, { migrate: true, purpose: "leasehold migrate" });
      const { applied, known } = opened.migrations;
      await opened.close();
      console.log(`migrations: ${applied}/${known} applied (${opened.handle.kind}, ${opened.handle.location})`);
      return EXIT.ok;
    } catch (error) {
      printError(error);
      return EXIT.failure;
    }
  },
};
