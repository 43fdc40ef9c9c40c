import { createRouter } from "./init";
import { authRouter } from "./routers/auth";
import { usersRouter } from "./routers/users";
import { consoleRouter } from "./routers/console";
import { healthRouter } from "./routers/health";
import { ledgerRouter } from "./routers/ledger";
import { actionsRouter } from "./routers/actions";
import { dashboardRouter } from "./routers/dashboard";
import { consoleFormRouter } from "./routers/console-form";

export const appRouter = createRouter({
  actions: actionsRouter,
  auth: authRouter,
  console: consoleRouter,
  consoleForm: consoleFormRouter,
  dashboard: dashboardRouter,
  health: healthRouter,
  ledger: ledgerRouter,
  users: usersRouter,
});

export type AppRouter = typeof appRouter;
