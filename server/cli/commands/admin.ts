import { ADMIN_ROLES, adminRoleSchema, createAdmin, disableAdmin, listAdmins, requireActiveAdmin, resetAdminPassword, setAdminRole, type AdminActor } from "../../admins";
import type { Database } from "../../db";
import type { CliContext } from "../context";
import { EXIT, UsageError } from "../io";
import { parseCommandArgs, requireFlag, splitSubcommand } from "../args";

const USAGE = [
  "leasehold admin create --name NAME [--role owner|approver|auditor]",
  "       leasehold admin list",
  "       leasehold admin disable NAME [--as ADMIN]",
  "       leasehold admin role NAME --role owner|approver|auditor [--as ADMIN]",
  "       leasehold admin password NAME [--as ADMIN]",
  "",
  "create and password print a generated one-time password (shown once, stored only as an",
  "argon2id hash); it must be replaced at the first sign-in. disable ends every session of",
  "the admin. Roles: owner (everything), approver (decide actions, see hosts and actions),",
  "auditor (read-only: audit, actions, evidence). Every change is sealed as admin/1, under",
  "--as ADMIN when given (the CLI trusts whoever can reach the database), else as the CLI.",
].join("\n");

const SUBCOMMANDS = ["create", "list", "disable", "role", "password"] as const;

function role(value: string | undefined): (typeof ADMIN_ROLES)[number] | undefined {
  if (value === undefined) return undefined;
  const parsed = adminRoleSchema.safeParse(value);
  if (!parsed.success) throw new UsageError(`--role must be one of ${ADMIN_ROLES.join(", ")}`);
  return parsed.data;
}

async function actorFor(db: Database, as: string | undefined): Promise<AdminActor> {
  if (as === undefined) return { kind: "system", id: "cli" };
  const admin = await requireActiveAdmin(db, as);
  return { kind: "admin", id: admin.id };
}

export const adminCommand = {
  name: "admin",
  summary: "web-admin accounts: create (prints a one-time password), list, disable, role, password",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    // A UsageError reaches main(), which prints it in one line and exits 2.
    const { sub, rest } = splitSubcommand(args, SUBCOMMANDS);
    if (sub === "create") {
      const { values } = parseCommandArgs(rest, { name: { type: "string" }, role: { type: "string" } });
      const name = requireFlag(values, "name");
      const created = await ctx.withDatabase("leasehold admin create", ({ handle }) => createAdmin(handle.db, name, { role: role(values.role) ?? "owner" }));
      ctx.out(`admin ${created.admin.username} (${created.admin.role}) created (id ${created.admin.id})`);
      ctx.out(`password: ${created.password}`);
      ctx.out("A one-time password: shown once, stored only as a hash, and it must be changed at the first sign-in.");
      return EXIT.ok;
    }
    if (sub === "list") {
      parseCommandArgs(rest, {});
      const admins = await ctx.withDatabase("leasehold admin list", ({ handle }) => listAdmins(handle.db));
      if (admins.length === 0) ctx.out("no admins");
      for (const a of admins) {
        const state = a.disabled ? "disabled" : a.mustChangePassword ? "active, must change password" : "active";
        ctx.out(`${a.username}  ${a.role}  ${state}  created ${a.createdAt.toISOString()}`);
      }
      return EXIT.ok;
    }
    const { values, positionals } = parseCommandArgs(rest, { as: { type: "string" }, role: { type: "string" } }, { min: 1, max: 1, label: "admin NAME" });
    const name = positionals[0] as string;
    if (sub === "disable") {
      const admin = await ctx.withDatabase("leasehold admin disable", async ({ handle }) => disableAdmin(handle.db, name, await actorFor(handle.db, values.as)));
      ctx.out(`admin ${admin.username} disabled; every session of theirs has ended`);
      return EXIT.ok;
    }
    if (sub === "role") {
      const next = role(requireFlag(values, "role"));
      if (next === undefined) throw new UsageError("--role is required");
      const admin = await ctx.withDatabase("leasehold admin role", async ({ handle }) => setAdminRole(handle.db, name, next, await actorFor(handle.db, values.as)));
      ctx.out(`admin ${admin.username} is now ${admin.role}`);
      return EXIT.ok;
    }
    const reset = await ctx.withDatabase("leasehold admin password", async ({ handle }) => resetAdminPassword(handle.db, name, await actorFor(handle.db, values.as)));
    ctx.out(`admin ${reset.admin.username}: password reset`);
    ctx.out(`password: ${reset.password}`);
    ctx.out("Shown once; every session of theirs has ended and the password must be changed at the next sign-in.");
    return EXIT.ok;
  },
};
