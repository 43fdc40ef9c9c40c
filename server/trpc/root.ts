import { createRouter } from "./init";
import { authRouter } from "./routers/auth";
import { usersRouter } from "./routers/users";
import { consoleRouter } from "./routers/console";
import { grantsRouter } from "./routers/grants";
import { hostsRouter } from "./routers/hosts";
import { tokensRouter } from "./routers/tokens";
import { healthRouter } from "./routers/health";
import { ledgerRouter } from "./routers/ledger";

export const appRouter = createRouter({
  auth: authRouter,
  console: consoleRouter,
  grants: grantsRouter,
  health: healthRouter,
  hosts: hostsRouter,
  ledger: ledgerRouter,
  tokens: tokensRouter,
  users: usersRouter,
});

export type AppRouter = typeof appRouter;
