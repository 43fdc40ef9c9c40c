import { parseCommandArgs } from "../args";
import type { CliContext } from "../context";
import { EXIT } from "../io";
import { readMigrationStatus } from "../../db";

export const migrateCommand = {
  name: "migrate",
  summary: "apply pending database migrations and exit (the hub also does this at start)",
  usage: "leasehold migrate",
  async run(args: string[], ctx: CliContext): Promise<number> {
    parseCommandArgs(args, {});
    // withDatabase applies pending migrations when it opens the database.
    const line = await ctx.withDatabase("leasehold migrate", async ({ handle }) => {
      const { applied, known } = await readMigrationStatus(handle);
      return `migrations: ${applied}/${known} applied (${handle.kind}, ${handle.location})`;
    });
    ctx.out(line);
    return EXIT.ok;
  },
};
