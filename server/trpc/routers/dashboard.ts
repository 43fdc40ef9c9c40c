/** The dashboard's figures and charts (readers). Aggregation lives in server/dashboard. */
import { ROLES } from "../../admins";
import { dashboardCharts, dashboardSummary } from "../../dashboard";
import { createRouter, roleProcedure } from "../init";
import { channel } from "./channel";

export const dashboardRouter = createRouter({
  summary: roleProcedure(ROLES.readers).query(({ ctx }) => channel(() => dashboardSummary(ctx.runtime.database.handle.db))),
  charts: roleProcedure(ROLES.readers).query(({ ctx }) => channel(() => dashboardCharts(ctx.runtime.database.handle.db))),
});
