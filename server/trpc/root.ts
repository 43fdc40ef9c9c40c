import { createRouter } from "./init";
import { approvalsRouter } from "./routers/approvals";
import { auditRouter } from "./routers/audit";
import { authRouter } from "./routers/auth";
import { usersRouter } from "./routers/users";
import { consoleRouter } from "./routers/console";
import { grantsRouter } from "./routers/grants";
import { hostsRouter } from "./routers/hosts";
import { tokensRouter } from "./routers/tokens";
import { healthRouter } from "./routers/health";
import { ledgerRouter } from "./routers/ledger";
import { actionsRouter } from "./routers/actions";
import { dashboardRouter } from "./routers/dashboard";
import { consoleFormRouter } from "./routers/console-form";
import { passkeysRouter } from "./routers/passkeys";
import { oauthRouter } from "./routers/oauth";
import { pushRouter } from "./routers/push";

export const appRouter = createRouter({
  actions: actionsRouter,
  approvals: approvalsRouter,
  audit: auditRouter,
  auth: authRouter,
  console: consoleRouter,
  grants: grantsRouter,
  consoleForm: consoleFormRouter,
  dashboard: dashboardRouter,
  health: healthRouter,
  hosts: hostsRouter,
  ledger: ledgerRouter,
  oauth: oauthRouter,
  passkeys: passkeysRouter,
  push: pushRouter,
  tokens: tokensRouter,
  users: usersRouter,
});

export type AppRouter = typeof appRouter;
