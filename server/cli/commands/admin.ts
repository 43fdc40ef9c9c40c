import { createAdmin } from "../../admins";
import type { CliContext } from "../context";
import { EXIT, UsageError } from "../io";
import { parseFlags, requireFlag } from "./args";

const USAGE = "leasehold admin create --name NAME";

export const adminCommand = {
  name: "admin",
  summary: "create a web-admin account (prints its generated password once)",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    // A UsageError reaches main(), which prints it with the usage and exits 2.
    const [sub, ...rest] = args;
    if (sub !== "create") throw new UsageError(`unknown subcommand ${JSON.stringify(sub ?? "")}`);
    const name = requireFlag(parseFlags(rest, ["name"]).flags, "name");
    const created = await ctx.withDatabase("leasehold admin create", ({ handle }) => createAdmin(handle.db, name));
    ctx.out(`admin ${created.admin.username} created (id ${created.admin.id})`);
    ctx.out(`password: ${created.password}`);
    ctx.out("This password is shown once and stored only as a hash; keep it now.");
    return EXIT.ok;
  },
};
