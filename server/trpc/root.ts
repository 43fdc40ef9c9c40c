import { createRouter } from "./init";
import { approvalsRouter } from "./routers/approvals";
import { authRouter } from "./routers/auth";
import { usersRouter } from "./routers/users";
import { consoleRouter } from "./routers/console";
import { healthRouter } from "./routers/health";
import { ledgerRouter } from "./routers/ledger";
import { passkeysRouter } from "./routers/passkeys";

export const appRouter = createRouter({
  approvals: approvalsRouter,
  auth: authRouter,
  console: consoleRouter,
  health: healthRouter,
  ledger: ledgerRouter,
  passkeys: passkeysRouter,
  users: usersRouter,
});

export type AppRouter = typeof appRouter;
