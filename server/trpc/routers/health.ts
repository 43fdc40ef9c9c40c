import { readHealth } from "../../health/read-health";
import { ROLES } from "../../admins";
import { createRouter, roleProcedure } from "../init";

export const healthRouter = createRouter({
  get: roleProcedure(ROLES.readers).query(({ ctx }) => readHealth(ctx.runtime)),
});
