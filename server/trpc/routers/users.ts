/** Admin accounts (owner only): list, create with a one-time password, disable, change role, reset a password. */
import { z } from "zod";
import { ROLES, adminRoleSchema, createAdmin, disableAdmin, listAdmins, resetAdminPassword, setAdminRole } from "../../admins";
import { LeaseholdError } from "../../errors";
import { createRouter, roleProcedure } from "../init";
import { channel } from "./channel";

const name = z.string().min(1).max(63);

export const usersRouter = createRouter({
  list: roleProcedure(ROLES.owner).query(async ({ ctx }) =>
    (await listAdmins(ctx.runtime.database.handle.db)).map((a) => ({ ...a, createdAt: a.createdAt.toISOString() })),
  ),
  create: roleProcedure(ROLES.owner, { reauth: true })
    .input(z.strictObject({ name, role: adminRoleSchema }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const { admin, password } = await createAdmin(ctx.runtime.database.handle.db, input.name, { role: input.role, actor: { kind: "admin", id: ctx.session.adminId } });
        return { username: admin.username, role: admin.role, oneTimePassword: password };
      }),
    ),
  disable: roleProcedure(ROLES.owner, { reauth: true })
    .input(z.strictObject({ name }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        if (input.name === ctx.session.username) throw new LeaseholdError("FORBIDDEN", "you cannot disable yourself", { tier: "hub" });
        const admin = await disableAdmin(ctx.runtime.database.handle.db, input.name, { kind: "admin", id: ctx.session.adminId });
        return { username: admin.username, disabled: admin.disabled };
      }),
    ),
  setRole: roleProcedure(ROLES.owner, { reauth: true })
    .input(z.strictObject({ name, role: adminRoleSchema }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const admin = await setAdminRole(ctx.runtime.database.handle.db, input.name, input.role, { kind: "admin", id: ctx.session.adminId });
        return { username: admin.username, role: admin.role };
      }),
    ),
  resetPassword: roleProcedure(ROLES.owner, { reauth: true })
    .input(z.strictObject({ name }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const { admin, password } = await resetAdminPassword(ctx.runtime.database.handle.db, input.name, { kind: "admin", id: ctx.session.adminId });
        return { username: admin.username, oneTimePassword: password };
      }),
    ),
});
