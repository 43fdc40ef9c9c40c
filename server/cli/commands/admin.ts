import { createAdmin } from "../../admins";
import type { CliContext } from "../context";
import { EXIT } from "../io";
import { parseCommandArgs, requireFlag, splitSubcommand } from "../args";

const USAGE = "leasehold admin create --name NAME";

export const adminCommand = {
  name: "admin",
  summary: "create a web-admin account (prints its generated password once)",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    // A UsageError reaches main(), which prints it in one line and exits 2.
    const { rest } = splitSubcommand(args, ["create"]);
    const name = requireFlag(parseCommandArgs(rest, { name: { type: "string" } }).values, "name");
    const created = await ctx.withDatabase("leasehold admin create", ({ handle }) => createAdmin(handle.db, name));
    ctx.out(`admin ${created.admin.username} created (id ${created.admin.id})`);
    ctx.out(`password: ${created.password}`);
    ctx.out("This password is shown once and stored only as a hash; keep it now.");
    return EXIT.ok;
  },
};
